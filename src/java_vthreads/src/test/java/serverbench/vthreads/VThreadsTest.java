package serverbench.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import serverbench.jvm.Payload;
import serverbench.jvm.TestSupport;

/** spawn and throughput of java_vthreads (pingping and the CLI: src/java's shared tests). */
class VThreadsTest {
    private static JsonNode record(String... args) {
        TestSupport.RunResult r = TestSupport.run(args);
        assertEquals(0, r.code(), r.stderr());
        JsonNode j = r.json();
        assertEquals(java.util.List.of(), TestSupport.errors(TestSupport.schema(null), j));
        assertTrue(j.at("/validation/ok").asBoolean(), r.stdout());
        return j;
    }

    @Test
    void runsOnVirtualThreads() throws Exception {
        assertNotNull(Main.VIRTUAL, "the tests run on JDK 25 (scripts/test.sh passes -Djvm)");
        Thread t = Main.VIRTUAL.newThread(() -> { });
        assertEquals(Boolean.TRUE, Thread.class.getMethod("isVirtual").invoke(t)); // Java 21 API, built for 17
    }

    @Test
    void spawnEveryThreadReady() {
        JsonNode j = record("spawn", "--processes", "5000");
        assertEquals(5000, j.at("/validation/ready").asLong());
        assertTrue(j.at("/metrics/all_ready_s").asDouble() >= j.at("/metrics/spawn_call_s").asDouble());
        assertTrue(j.at("/metrics/bytes_per_process").isNumber());
    }

    @Test
    void throughputCountsAgreeAndEveryPairWorked() {
        JsonNode j = record("throughput", "--pairs", "3", "--message-bytes", "100", "--duration-s", "0.3",
            "--report-every", "50");
        long n = j.at("/metrics/exchanges").asLong();
        assertEquals(n, j.at("/validation/counted_exchanges").asLong());
        assertTrue(j.at("/validation/min_pair_exchanges").asLong() >= 1);
        JsonNode s = j.at("/metrics/samples");
        assertEquals(n, s.get(s.size() - 1).get(1).asLong(), "the last sample is the exact total");
        assertEquals(j.at("/metrics/elapsed_s").asDouble(), s.get(s.size() - 1).get(0).asDouble(), 1e-9);
    }

    /** A client counts a corrupted message and still answers it. */
    @Test
    void clientCountsBadPayload() throws Exception {
        VThroughput.Shared shared = new VThroughput.Shared();
        BlockingQueue<byte[]> in = new ArrayBlockingQueue<>(1);
        BlockingQueue<byte[]> out = new LinkedBlockingQueue<>();
        Thread t = Main.VIRTUAL.newThread(VThroughput.client(in, out, 10, true, shared));
        t.start();
        in.put(Payload.build(10, Payload.CLIENT)); // wrong marker
        byte[] reply = out.poll(10, TimeUnit.SECONDS);
        assertNotNull(reply);
        assertEquals(1, shared.payloadErrors.get());
        assertTrue(Payload.check(reply, 10, Payload.CLIENT), "the answer carries the client's marker");
        t.interrupt();
    }

    /** A server stops at the flag: its final report holds the remainder and its own count. */
    @Test
    void serverFinalReport() throws Exception {
        VThroughput.Shared shared = new VThroughput.Shared();
        BlockingQueue<byte[]> in = new ArrayBlockingQueue<>(1);
        BlockingQueue<byte[]> toClient = new LinkedBlockingQueue<>();
        BlockingQueue<VThroughput.AggMsg> agg = new LinkedBlockingQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        Thread t = Main.VIRTUAL.newThread(VThroughput.server(in, toClient, agg, 10, 2, true, shared, start));
        t.start();
        start.countDown();
        for (int i = 0; i < 3; i++) {
            assertNotNull(toClient.poll(10, TimeUnit.SECONDS));
            if (i == 2) {
                shared.stop = true;
            }
            in.put(Payload.build(10, Payload.CLIENT));
        }
        t.join(10_000);
        assertEquals(new VThroughput.Report(2), agg.poll());
        assertEquals(new VThroughput.Final(1, 3), agg.poll());
        assertEquals(0, shared.payloadErrors.get());
    }
}
