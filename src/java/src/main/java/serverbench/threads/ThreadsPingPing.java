package serverbench.threads;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import serverbench.jvm.Owned;
import serverbench.jvm.Payload;
import serverbench.jvm.PingPingResult;

/**
 * docs/spec.md "pingping" with two platform threads A and B. Each owns an inbox, an
 * {@code ArrayBlockingQueue<byte[]>(1)}: a send is a {@code put} into the peer's inbox and
 * returns as soon as the message is in the slot (asynchronous, like an actor's mailbox or
 * Go's channel of capacity 1), blocking only while the peer has not yet taken the previous
 * message. A rendezvous ({@code SynchronousQueue}) cannot run this benchmark: both sides
 * send message 1 at the same moment and would each wait forever for the other to receive.
 */
public final class ThreadsPingPing {
    private ThreadsPingPing() {}

    /** One side: waits for the start signal, sends message 1, then receive-check-answer. */
    static final class Side implements Runnable {
        final BlockingQueue<byte[]> inbox = new ArrayBlockingQueue<>(1);
        private final byte peerMarker;
        private final int bytes;
        private final int reps;
        private final Owned own; // this side's own buffers, built before the clock starts
        private final CountDownLatch start;
        private final CountDownLatch done;
        private BlockingQueue<byte[]> peer;
        // Written by this thread only; read by main after done opens (the latch orders them).
        long received;
        long errors;

        Side(byte me, byte peerMarker, int bytes, int reps, boolean copy, CountDownLatch start, CountDownLatch done) {
            this.peerMarker = peerMarker;
            this.bytes = bytes;
            this.reps = reps;
            this.own = new Owned(bytes, me, 2, copy);
            this.start = start;
            this.done = done;
        }

        void peer(BlockingQueue<byte[]> p) {
            this.peer = p;
        }

        @Override
        public void run() {
            try {
                start.await();
                peer.put(own.first());
                int sent = 1;
                while (received < reps) {
                    byte[] buf = inbox.take();
                    if (!Payload.check(buf, bytes, peerMarker)) {
                        errors++;
                    }
                    received++;
                    if (sent < reps) {
                        peer.put(own.reply(buf));
                        sent++;
                    }
                }
                done.countDown(); // tells main; the latch also publishes received and errors
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("pingping side interrupted", e);
            }
        }
    }

    public static PingPingResult run(int bytes, int reps, boolean copy) throws InterruptedException {
        return run(bytes, reps, copy, Thread::new);
    }

    /**
     * The same hand-off on threads from {@code factory} (java_vthreads: virtual threads),
     * so that the two JVM thread languages differ only in the kind of thread.
     */
    public static PingPingResult run(int bytes, int reps, boolean copy, ThreadFactory factory)
            throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(2);
        Side a = new Side(Payload.PING_A, Payload.PING_B, bytes, reps, copy, start, done);
        Side b = new Side(Payload.PING_B, Payload.PING_A, bytes, reps, copy, start, done);
        a.peer(b.inbox);
        b.peer(a.inbox);
        // A side that dies (e.g. OutOfMemoryError) must not leave main waiting forever.
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread ta = thread(factory, a, "pingping-a", failure);
        Thread tb = thread(factory, b, "pingping-b", failure);
        ta.start();
        tb.start();

        long t0 = System.nanoTime();
        start.countDown();
        // A timed await returns as soon as the latch opens: polling adds nothing to the time.
        while (!done.await(50, TimeUnit.MILLISECONDS)) {
            Throwable f = failure.get();
            if (f != null) {
                throw new IllegalStateException("a pingping thread failed: " + f, f);
            }
        }
        long elapsedNs = System.nanoTime() - t0;

        ta.join();
        tb.join();
        return new PingPingResult(elapsedNs, a.received, b.received, a.errors + b.errors);
    }

    private static Thread thread(ThreadFactory factory, Side s, String name, AtomicReference<Throwable> failure) {
        Thread t = factory.newThread(s);
        t.setName(name);
        t.setDaemon(true); // a failed run must not keep the JVM alive (virtual threads always are)
        t.setUncaughtExceptionHandler((th, e) -> failure.compareAndSet(null, e));
        return t;
    }
}
