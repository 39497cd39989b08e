package serverbench.vthreads;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;

import serverbench.jvm.SpawnResult;
import serverbench.jvm.Sys;

/**
 * docs/spec.md "spawn" with virtual threads: N threads that each count down the ready latch
 * once and then wait for a latch nobody opens (Go: a receive on one channel nobody writes).
 * They are never released: the program prints its record and exits (virtual threads are
 * daemon threads).
 */
final class VSpawn {
    private VSpawn() {}

    static SpawnResult run(int n, ThreadFactory virtual) throws InterruptedException {
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch never = new CountDownLatch(1);
        Runnable dormant = () -> {
            ready.countDown();
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Long rssBefore = Sys.rssBytes();

        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            virtual.newThread(dormant).start(); // returns once the thread is scheduled, not yet running
        }
        long spawnCallNs = System.nanoTime() - t0;
        ready.await(); // a thread that cannot be created (OutOfMemoryError) fails its start call above
        long allReadyNs = System.nanoTime() - t0;

        Long rssAfter = Sys.rssBytes();
        return new SpawnResult(spawnCallNs, allReadyNs, rssBefore, rssAfter, Sys.heapUsedBytes(), n - ready.getCount());
    }
}
