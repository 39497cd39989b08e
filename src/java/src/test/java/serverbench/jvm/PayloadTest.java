package serverbench.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

class PayloadTest {
    @Test
    void markersAreThoseOfTheSpec() {
        assertEquals(TestSupport.cliJson().at("/markers/pingping_a").asInt(), Payload.PING_A);
        assertEquals(TestSupport.cliJson().at("/markers/pingping_b").asInt(), Payload.PING_B);
    }

    @Test
    void buildLayout() {
        byte[] b = Payload.build(600, Payload.PING_A);
        assertEquals(600, b.length);
        assertEquals(65, b[0]);
        for (int i = 1; i < 600; i++) {
            assertEquals((byte) (i % 256), b[i]);
        }
        assertTrue(Payload.check(b, 600, Payload.PING_A));
    }

    @Test
    void checkDetectsCorruption() {
        byte[] b = Payload.build(300, Payload.PING_A);
        assertFalse(Payload.check(b, 300, Payload.PING_B), "wrong marker");
        assertFalse(Payload.check(b, 301, Payload.PING_A), "wrong length");
        assertFalse(Payload.check(Arrays.copyOf(b, 299), 300, Payload.PING_A), "short buffer");
        byte[] last = b.clone();
        last[299]++;
        assertFalse(Payload.check(last, 300, Payload.PING_A), "last byte");
        assertFalse(Payload.check(null, 300, Payload.PING_A));
        byte[] one = Payload.build(1, Payload.PING_B);
        assertTrue(Payload.check(one, 1, Payload.PING_B));
        assertFalse(Payload.check(one, 1, Payload.PING_A));
    }

    @Test
    void copyMovesBytesIntoOwnBuffersInTurn() {
        Owned o = new Owned(100, Payload.PING_B, 2, true);
        byte[] first = o.first();
        byte[] in = Payload.build(100, Payload.PING_A);
        in[50] = (byte) 0xEE; // a byte only the received message has
        byte[] a = o.reply(in);
        byte[] b = o.reply(in);
        byte[] c = o.reply(in);
        assertSame(o.buffer(0), first);
        assertSame(o.buffer(1), a, "after the first message the own buffers are used in turn");
        assertSame(o.buffer(0), b);
        assertSame(o.buffer(1), c);
        assertNotSame(in, a);
        assertEquals(65, in[0], "the received buffer is never written");
        assertEquals(66, a[0]);
        assertEquals((byte) 0xEE, a[50], "the bytes really moved");
        assertTrue(Payload.check(a, 100, Payload.PING_B));
        Owned s = new Owned(100, Payload.PING_B, 1, false);
        assertSame(s.buffer(0), s.reply(in), "share always sends its own buffer");
        assertEquals((byte) 50, s.buffer(0)[50], "and never writes it");
    }
}
