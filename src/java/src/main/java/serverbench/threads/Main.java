package serverbench.threads;

import serverbench.jvm.Language;
import serverbench.jvm.Launcher;
import serverbench.jvm.PingPingResult;
import serverbench.jvm.Sys;

/** The {@code java} language of spec/cli.json: pingping with two platform threads. */
public final class Main implements Language {
    public static final String LANGUAGE = "java";

    public static void main(String[] args) {
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
        return "Java " + Runtime.version() + " / " + Sys.jvm() + " / platform threads";
    }

    /**
     * The CPUs the JVM believes it has ({@code Runtime.availableProcessors}, which
     * {@code -XX:ActiveProcessorCount=C} sets): the benchmark's two threads are OS threads
     * with no user-level scheduler, so this is the one scheduler-related setting the JVM has.
     */
    @Override
    public int schedulers() {
        return Runtime.getRuntime().availableProcessors();
    }

    @Override
    public PingPingResult pingping(int messageBytes, int repetitions, boolean copy) throws InterruptedException {
        return ThreadsPingPing.run(messageBytes, repetitions, copy);
    }
}
