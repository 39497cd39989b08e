package serverbench.vthreads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import serverbench.jvm.Owned;
import serverbench.jvm.Payload;
import serverbench.jvm.ThroughputResult;

/**
 * docs/spec.md "throughput" with virtual threads: P server/client pairs and one aggregator.
 * A pair's mailboxes are one-slot {@code ArrayBlockingQueue}s (one message is in flight per
 * pair, as in Throughput.scala); the aggregator's is unbounded, as an actor's mailbox, so a
 * server's report never waits for the aggregator. Same counting, stop flag and clock as the
 * Scala/Akka program's fair variant.
 */
final class VThroughput {
    private VThroughput() {}

    /** spec/cli.json throughput_sample_min_interval_s. */
    static final long SAMPLE_MIN_INTERVAL_NS = 100_000_000L;

    /** What servers send the aggregator (sealed: nothing else arrives there). */
    sealed interface AggMsg permits Report, Final {}

    record Report(long exchanges) implements AggMsg {}

    record Final(long remainder, long total) implements AggMsg {}

    /** Shared by all servers: the stop flag, read once per exchange, and the error count. */
    static final class Shared {
        volatile boolean stop;
        final AtomicLong payloadErrors = new AtomicLong();
    }

    static Runnable client(BlockingQueue<byte[]> inbox, BlockingQueue<byte[]> server, int bytes, boolean copy,
                           Shared shared) {
        Owned own = new Owned(bytes, Payload.CLIENT, 1, copy);
        return () -> {
            try {
                while (true) { // parked in take() for good once its server stops
                    byte[] buf = inbox.take();
                    if (!Payload.check(buf, bytes, Payload.SERVER)) {
                        shared.payloadErrors.incrementAndGet();
                    }
                    server.put(own.reply(buf));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    static Runnable server(BlockingQueue<byte[]> inbox, BlockingQueue<byte[]> client, BlockingQueue<AggMsg> agg,
                           int bytes, long k, boolean copy, Shared shared, CountDownLatch start) {
        Owned own = new Owned(bytes, Payload.SERVER, 1, copy);
        return () -> {
            try {
                start.await();
                client.put(own.first());
                long count = 0;
                while (true) {
                    byte[] buf = inbox.take();
                    if (!Payload.check(buf, bytes, Payload.CLIENT)) {
                        shared.payloadErrors.incrementAndGet();
                    }
                    count++; // one exchange: our message went out and the checked answer came back
                    if (count % k == 0) {
                        agg.put(new Report(k));
                    }
                    if (shared.stop) {
                        agg.put(new Final(count % k, count));
                        return;
                    }
                    client.put(own.reply(buf));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    /** The aggregator's state, read by main after done opens (the latch publishes it). */
    static final class Aggregator implements Runnable {
        final BlockingQueue<AggMsg> inbox = new LinkedBlockingQueue<>();
        final List<double[]> samples = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        private final int pairs;
        volatile long t0; // written by main before the start signal, so before any report
        long total;
        long counted;
        long minPair = Long.MAX_VALUE;
        long end;

        Aggregator(int pairs) {
            this.pairs = pairs;
        }

        @Override
        public void run() {
            long lastSample = Long.MIN_VALUE;
            int finals = 0;
            try {
                while (finals < pairs) {
                    AggMsg m = inbox.take();
                    if (m instanceof Report r) {
                        total += r.exchanges();
                        long now = System.nanoTime();
                        if (lastSample == Long.MIN_VALUE || now - lastSample >= SAMPLE_MIN_INTERVAL_NS) {
                            samples.add(new double[] {(now - t0) / 1e9, total});
                            lastSample = now;
                        }
                    } else if (m instanceof Final f) {
                        total += f.remainder();
                        counted += f.total();
                        minPair = Math.min(minPair, f.total());
                        finals++;
                    }
                }
                end = System.nanoTime(); // the clock stops when the last final arrives
                samples.add(new double[] {(end - t0) / 1e9, total});
                done.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static ThroughputResult run(int pairs, int bytes, double durationS, long k, boolean copy, ThreadFactory virtual)
            throws InterruptedException {
        Shared shared = new Shared();
        CountDownLatch start = new CountDownLatch(1);
        Aggregator agg = new Aggregator(pairs);
        // A thread that dies (e.g. OutOfMemoryError) must not leave main waiting forever.
        AtomicReference<Throwable> failure = new AtomicReference<>();
        start(virtual, agg, failure);
        for (int i = 0; i < pairs; i++) {
            BlockingQueue<byte[]> toServer = new ArrayBlockingQueue<>(1);
            BlockingQueue<byte[]> toClient = new ArrayBlockingQueue<>(1);
            start(virtual, client(toClient, toServer, bytes, copy, shared), failure);
            start(virtual, server(toServer, toClient, agg.inbox, bytes, k, copy, shared, start), failure);
        }

        long t0 = System.nanoTime();
        agg.t0 = t0;
        start.countDown(); // every server's start signal
        long deadline = t0 + (long) (durationS * 1e9);
        for (long now = System.nanoTime(); now < deadline; now = System.nanoTime()) {
            LockSupport.parkNanos(deadline - now);
        }
        shared.stop = true;
        while (!agg.done.await(50, TimeUnit.MILLISECONDS)) {
            Throwable f = failure.get();
            if (f != null) {
                throw new IllegalStateException("a throughput thread failed: " + f, f);
            }
        }
        return new ThroughputResult(agg.end - t0, agg.total, agg.counted, agg.minPair,
            shared.payloadErrors.get(), agg.samples);
    }

    private static void start(ThreadFactory virtual, Runnable r, AtomicReference<Throwable> failure) {
        Thread t = virtual.newThread(r);
        t.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
        t.start();
    }
}
