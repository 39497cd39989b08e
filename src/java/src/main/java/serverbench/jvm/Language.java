package serverbench.jvm;

/**
 * One JVM language of the contract: its name in spec/cli.json, what its runtime reports,
 * and its benchmarks. java and scala_actors implement pingping only, java_vthreads all
 * three; spec/cli.json {@code languages.L.benchmarks} says which a language implements
 * and {@link Launcher} refuses the others before anything runs.
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

    /** One spawn measurement (docs/spec.md "spawn"); only languages listing spawn have it. */
    default SpawnResult spawn(int processes) throws Exception {
        throw new UnsupportedOperationException(name() + " has no spawn");
    }

    /** One throughput measurement (docs/spec.md "throughput"). */
    default ThroughputResult throughput(int pairs, int messageBytes, double durationS, long reportEvery, boolean copy)
            throws Exception {
        throw new UnsupportedOperationException(name() + " has no throughput");
    }
}
