package serverbench.threads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import serverbench.jvm.Payload;
import serverbench.jvm.PingPingResult;

class ThreadsPingPingTest {
    /** A side counts a corrupted message and still answers it; main would report ok false. */
    @Test
    void corruptedMessageIsCounted() throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        ThreadsPingPing.Side side = new ThreadsPingPing.Side(Payload.PING_A, Payload.PING_B, 10, 2, true, start, done);
        BlockingQueue<byte[]> sink = new LinkedBlockingQueue<>();
        side.peer(sink);
        side.inbox.put(Payload.build(10, Payload.PING_A)); // wrong marker: A's own
        Thread t = new Thread(side);
        t.start();
        start.countDown();
        side.inbox.put(Payload.build(10, Payload.PING_B)); // good
        assertTrue(done.await(10, TimeUnit.SECONDS));
        t.join();
        assertEquals(2, side.received);
        assertEquals(1, side.errors);
        assertEquals(2, sink.size(), "sent message 1 and one answer: R = 2 messages");
        for (byte[] m : sink) {
            assertTrue(Payload.check(m, 10, Payload.PING_A), "what A sends carries A's marker");
        }
    }

    /** Each side sends exactly R and receives exactly R, for R = 1 and a larger R. */
    @Test
    void exactCounts() throws Exception {
        for (int reps : new int[] {1, 2, 1000}) {
            PingPingResult r = ThreadsPingPing.run(64, reps, true);
            assertEquals(reps, r.receivedA);
            assertEquals(reps, r.receivedB);
            assertEquals(0, r.payloadErrors);
            assertTrue(r.elapsedNs > 0);
        }
    }
}
