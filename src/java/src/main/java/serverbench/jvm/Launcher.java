package serverbench.jvm;

import java.io.PrintStream;
import java.util.Arrays;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The program around a {@link Language}: parse the command line ({@link Cli}), run the
 * benchmark, print the one-line record (spec/native-record.schema.json). Exit codes are
 * spec/cli.json {@code exit_codes}: 0 record with validation.ok true; 1 record with ok
 * false, or a runtime failure (one {@code error:} line, nothing on stdout); 2 bad command
 * line (one {@code error:} line, nothing on stdout).
 */
public final class Launcher {
    public static final String PROGRAM_VERSION = "0.1.0";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Launcher() {}

    /** For a language's main: stdout carries only the record, then the process exits. */
    public static void main(String[] args, Language lang) {
        PrintStream out = System.out;
        // Anything else that writes to System.out (a library, a stray println) lands on stderr.
        System.setOut(System.err);
        int code = run(args, out, System.err, lang);
        out.flush();
        System.exit(code);
    }

    /** Everything but the process exit, so that tests can call it. */
    public static int run(String[] args, PrintStream out, PrintStream err, Language lang) {
        Spec spec;
        Cli cli;
        Cli.Command cmd;
        try {
            spec = Spec.builtIn();
            cli = new Cli(spec, lang.name());
            cmd = cli.parse(Arrays.asList(args));
        } catch (Cli.UsageError e) {
            err.println("error: " + e.getMessage());
            return Spec.builtIn().exitCode("usage");
        } catch (RuntimeException e) {
            // The built-in spec/cli.json lacks what this program needs: a build problem.
            err.println("error: " + e.getMessage());
            return 1;
        }
        try {
            if (cmd instanceof Cli.Help) {
                out.println(cli.usage(spec.program()));
                out.flush();
                return spec.exitCode("ok");
            }
            // Read from the running runtime before any clock starts (start-up is outside the
            // timed region); for scala_actors this also starts the actors' scheduler.
            ObjectNode runtime = runtime(lang);
            ObjectNode line = MAPPER.createObjectNode();
            int code;
            if (cmd instanceof Cli.Version) {
                line.put("program", spec.program());
                line.put("program_version", PROGRAM_VERSION);
                line.put("language", lang.name());
                line.set("runtime", runtime);
                code = spec.exitCode("ok");
            } else {
                Cli.Run run = (Cli.Run) cmd;
                line.put("benchmark", run.benchmark());
                line.put("language", lang.name());
                line.put("variant", run.variant());
                boolean ok;
                switch (run.benchmark()) {
                    case "pingping" -> ok = pingping(lang, run, line);
                    case "spawn" -> ok = Records.spawn(lang, run, line);
                    case "throughput" -> ok = Records.throughput(lang, run, line);
                    default -> throw new IllegalStateException(
                        "spec/cli.json lists " + run.benchmark() + " for " + lang.name() + " but this program has no such benchmark");
                }
                line.set("runtime", runtime);
                code = spec.exitCode(ok ? "ok" : "run_failed");
            }
            out.println(encode(line));
            out.flush();
            return code;
        } catch (Throwable e) {
            // A runtime failure (e.g. OutOfMemoryError): one line, no record.
            err.println("error: " + e.getClass().getName() + ": " + e.getMessage());
            return spec.exitCode("run_failed");
        }
    }

    static ObjectNode runtime(Language lang) throws Exception {
        ObjectNode r = MAPPER.createObjectNode();
        r.put("name", lang.runtimeName());
        r.put("version", lang.runtimeVersion());
        r.put("schedulers", lang.schedulers());
        Long heap = Sys.maxHeapBytes();
        if (heap == null) {
            r.putNull("max_heap_bytes");
        } else {
            r.put("max_heap_bytes", heap);
        }
        return r;
    }

    private static boolean pingping(Language lang, Cli.Run run, ObjectNode line) throws Exception {
        int bytes = Math.toIntExact(run.intParam("message_bytes"));
        int reps = Math.toIntExact(run.intParam("repetitions"));
        boolean copy = run.stringParam("payload").equals("copy");
        PingPingResult r = lang.pingping(bytes, reps, copy);

        long messages = 2L * reps;
        boolean ok = r.receivedA == reps && r.receivedB == reps && r.payloadErrors == 0;
        ObjectNode params = line.putObject("params");
        params.put("message_bytes", bytes);
        params.put("repetitions", reps);
        params.put("payload", copy ? "copy" : "share");
        ObjectNode metrics = line.putObject("metrics");
        metrics.put("elapsed_s", r.elapsedNs / 1e9);
        metrics.put("messages", messages);
        metrics.put("ns_per_message", (double) r.elapsedNs / messages);
        ObjectNode validation = line.putObject("validation");
        validation.put("ok", ok);
        validation.put("received_a", r.receivedA);
        validation.put("received_b", r.receivedB);
        validation.put("payload_errors", r.payloadErrors);
        return ok;
    }

    static String encode(ObjectNode line) throws JsonProcessingException {
        return MAPPER.writeValueAsString(line);
    }
}
