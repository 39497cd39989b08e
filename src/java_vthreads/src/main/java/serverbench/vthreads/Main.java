package serverbench.vthreads;

import java.util.concurrent.ThreadFactory;

import serverbench.jvm.Language;
import serverbench.jvm.Launcher;
import serverbench.jvm.PingPingResult;
import serverbench.jvm.SpawnResult;
import serverbench.jvm.Sys;
import serverbench.jvm.ThroughputResult;
import serverbench.threads.ThreadsPingPing;

/**
 * The {@code java_vthreads} language of spec/cli.json: every process of the contract is a
 * virtual thread (JDK 21+), every mailbox a one-slot {@code ArrayBlockingQueue}.
 */
public final class Main implements Language {
    public static final String LANGUAGE = "java_vthreads";

    /** The JDK its cli.json entry names ("jdk"); another one is refused before anything runs. */
    static final int JDK = 25;

    static final ThreadFactory VIRTUAL = VirtualThreads.factory();

    public static void main(String[] args) {
        int feature = Runtime.version().feature();
        if (feature != JDK || VIRTUAL == null) {
            // one usage line naming both (exit 2, as for any command line this program refuses)
            System.err.println("error: " + LANGUAGE + " runs on JDK " + JDK + ", but this JVM is JDK "
                + System.getProperty("java.version"));
            System.exit(2);
        }
        Launcher.main(args, new Main());
    }

    @Override
    public String name() {
        return LANGUAGE;
    }

    @Override
    public String runtimeName() {
        return "java";
    }

    @Override
    public String runtimeVersion() {
        return "Java " + Runtime.version() + " / " + Sys.jvm() + " / virtual threads";
    }

    /**
     * The virtual-thread scheduler's parallelism (its carrier threads), by the JDK's own rule
     * (java.lang.VirtualThread.createDefaultScheduler): the system property
     * {@code jdk.virtualThreadScheduler.parallelism} the harness sets, else
     * {@code availableProcessors}. The scheduler itself is not reachable without
     * {@code --add-opens}.
     */
    @Override
    public int schedulers() {
        return Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
    }

    @Override
    public PingPingResult pingping(int messageBytes, int repetitions, boolean copy) throws InterruptedException {
        return ThreadsPingPing.run(messageBytes, repetitions, copy, VIRTUAL);
    }

    @Override
    public SpawnResult spawn(int processes) throws InterruptedException {
        return VSpawn.run(processes, VIRTUAL);
    }

    @Override
    public ThroughputResult throughput(int pairs, int messageBytes, double durationS, long reportEvery, boolean copy)
            throws InterruptedException {
        return VThroughput.run(pairs, messageBytes, durationS, reportEvery, copy, VIRTUAL);
    }
}
