package serverbench.jvm;

/**
 * One JVM language of the contract: its name in spec/cli.json, what its runtime reports,
 * and its benchmarks. Only pingping exists for the languages built on this launcher
 * (java, scala_actors); spec/cli.json {@code languages.L.benchmarks} says which a language
 * implements and {@link Launcher} refuses the others before anything runs.
 */
public interface Language {
    /** spec/cli.json language name, e.g. "java". */
    String name();

    /** runtime.name of the record, e.g. "java". */
    String runtimeName();

    /** runtime.version of the record. */
    String runtimeVersion();

    /** runtime.schedulers: what the running runtime itself reports (see the README). */
    int schedulers() throws Exception;

    /** One pingping measurement; the clock runs inside. */
    PingPingResult pingping(int messageBytes, int repetitions, boolean copy) throws Exception;
}
