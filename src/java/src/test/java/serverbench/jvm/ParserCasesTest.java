package serverbench.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The command-line cases generated from spec/cli.json into
 * tests/conformance/parser-cases.json, checked in process for the language under test
 * (the one named by the test's system properties): every usage case through
 * {@link Launcher#run} with captured stdout and stderr, every valid case through
 * {@link Cli#parse} only. No process is started and no benchmark runs.
 */
class ParserCasesTest {
    private static final String CASES = "tests/conformance/parser-cases.json";
    private static final double REL_TOL = 1e-9;

    private final String lang = TestSupport.languageName();

    /** The repository root: the parent of the spec directory the other tests read. */
    private static Path repoRoot() {
        Path root = TestSupport.specDir().getParent();
        if (root == null || !Files.isRegularFile(root.resolve("spec/cli.json"))) {
            throw new IllegalStateException("no spec/cli.json above " + TestSupport.specDir());
        }
        return root;
    }

    /** The case file, after checking that it was generated from the current spec/cli.json. */
    private static JsonNode cases() {
        Path root = repoRoot();
        JsonNode doc;
        byte[] cli;
        try {
            doc = TestSupport.MAPPER.readTree(root.resolve(CASES).toFile());
            cli = Files.readAllBytes(root.resolve("spec/cli.json"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String actual;
        try {
            actual = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(cli));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        assertEquals(actual, doc.path("cli_json_sha256").asText(), CASES
            + " was generated from another spec/cli.json: run python3 tests/python/conformance/cases.py");
        return doc;
    }

    private JsonNode languageCases(JsonNode doc, String kind) {
        JsonNode l = doc.path("languages").path(lang);
        assertTrue(l.isObject(), CASES + " has no language " + lang);
        JsonNode list = l.path(kind);
        assertTrue(list.isArray(), CASES + ": languages." + lang + "." + kind + " is not a list");
        return list;
    }

    private static List<String> args(JsonNode c) {
        return Spec.stringsOf(c.path("args"));
    }

    /** Non-blank lines of a captured stream. */
    private static List<String> nonBlank(String s) {
        List<String> out = new ArrayList<>();
        for (String l : s.split("\n", -1)) {
            if (!l.isBlank()) {
                out.add(l);
            }
        }
        return out;
    }

    @Test
    void usageCasesExitWithOneErrorLine() {
        JsonNode doc = cases();
        int usage = doc.path("exit_codes").path("usage").asInt(-1);
        Language guard = new NoRun(TestSupport.language());
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (JsonNode c : languageCases(doc, "usage")) {
            List<String> a = args(c);
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int code = Launcher.run(a.toArray(new String[0]), new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8), guard);
            String out = o.toString(StandardCharsets.UTF_8);
            String err = e.toString(StandardCharsets.UTF_8);
            List<String> problems = new ArrayList<>();
            if (code != usage) {
                problems.add("exit " + code + " (expected " + usage + ")");
            }
            if (!out.isEmpty()) {
                problems.add("stdout " + quote(out));
            }
            List<String> lines = nonBlank(err);
            if (lines.size() != 1) {
                problems.add(lines.size() + " non-blank stderr lines " + quote(err));
            } else {
                String line = lines.get(0);
                if (!line.startsWith("error: ")) {
                    problems.add("stderr line does not start with 'error: ': " + quote(line));
                }
                for (String m : Spec.stringsOf(c.path("mentions"))) {
                    if (!line.contains(m)) {
                        problems.add("stderr line " + quote(line) + " does not mention " + quote(m));
                    }
                }
            }
            if (!problems.isEmpty()) {
                failures.add(a + ": " + String.join("; ", problems));
            }
            checked++;
        }
        report(failures, checked, "usage");
    }

    @Test
    void validCasesParseToTheirParams() {
        JsonNode doc = cases();
        Cli cli = new Cli(Spec.builtIn(), lang);
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (JsonNode c : languageCases(doc, "valid")) {
            List<String> a = args(c);
            checked++;
            Cli.Command cmd;
            try {
                cmd = cli.parse(a);
            } catch (Cli.UsageError e) {
                failures.add(a + ": refused: error: " + e.getMessage());
                continue;
            }
            if (!(cmd instanceof Cli.Run run)) {
                failures.add(a + ": parsed as " + cmd + ", not a benchmark run");
                continue;
            }
            List<String> problems = new ArrayList<>();
            String bench = c.path("benchmark").asText();
            if (!run.benchmark().equals(bench)) {
                problems.add("benchmark " + run.benchmark() + " (expected " + bench + ")");
            }
            JsonNode variant = c.path("variant");
            if (!variant.isNull() && !variant.isMissingNode() && !run.variant().equals(variant.asText())) {
                problems.add("variant " + run.variant() + " (expected " + variant.asText() + ")");
            }
            // Under paper or mixed the record's params may differ from the flags: not compared.
            if (variant.isNull() || variant.isMissingNode() || variant.asText().equals("fair")) {
                problems.addAll(paramProblems(c.path("params"), run.params()));
            }
            if (!problems.isEmpty()) {
                failures.add(a + ": " + String.join("; ", problems));
            }
        }
        report(failures, checked, "valid");
    }

    /** Differences between the case's params and the parsed ones; numbers compared as numbers. */
    private static List<String> paramProblems(JsonNode expected, Map<String, Object> actual) {
        List<String> problems = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(actual.keySet());
        expected.fieldNames().forEachRemaining(names::add);
        for (String n : names) {
            JsonNode want = expected.get(n);
            Object got = actual.get(n);
            if (want == null) {
                problems.add("params." + n + " = " + got + " is not in the case");
            } else if (got == null) {
                problems.add("params." + n + " missing (expected " + want + ")");
            } else if (!sameValue(want, got)) {
                problems.add("params." + n + " = " + got + " (expected " + want + ")");
            }
        }
        return problems;
    }

    private static boolean sameValue(JsonNode want, Object got) {
        if (want.isNumber()) {
            if (!(got instanceof Number g)) {
                return false;
            }
            if (want.isIntegralNumber() && (g instanceof Long || g instanceof Integer)) {
                return want.bigIntegerValue().equals(java.math.BigInteger.valueOf(g.longValue()));
            }
            double w = want.asDouble();
            double d = g.doubleValue();
            return Math.abs(w - d) <= REL_TOL * Math.max(Math.abs(w), Math.abs(d));
        }
        if (want.isTextual()) {
            return got instanceof String s && s.equals(want.asText());
        }
        if (want.isBoolean()) {
            return got instanceof Boolean b && b == want.asBoolean();
        }
        return false;
    }

    private void report(List<String> failures, int checked, String kind) {
        assertTrue(checked > 0, CASES + " has no " + kind + " cases for " + lang);
        if (!failures.isEmpty()) {
            fail(failures.size() + " of " + checked + " " + kind + " cases of " + lang + " failed:\n  "
                + String.join("\n  ", failures));
        }
    }

    private static String quote(String s) {
        return "'" + s.replace("\n", "\\n") + "'";
    }

    /**
     * The language under test with nothing behind it: a usage case the launcher wrongly
     * accepts ends in an error here instead of starting a scheduler or a benchmark.
     */
    private static final class NoRun implements Language {
        private final Language lang;

        NoRun(Language lang) {
            this.lang = lang;
        }

        private IllegalStateException accepted() {
            return new IllegalStateException("the command line was accepted (stopped before anything ran)");
        }

        @Override
        public String name() {
            return lang.name();
        }

        @Override
        public String runtimeName() {
            return lang.runtimeName();
        }

        @Override
        public String runtimeVersion() {
            return lang.runtimeVersion();
        }

        @Override
        public int schedulers() {
            throw accepted();
        }

        @Override
        public PingPingResult pingping(int messageBytes, int repetitions, boolean copy) {
            throw accepted();
        }

        @Override
        public SpawnResult spawn(int processes) {
            throw accepted();
        }

        @Override
        public ThroughputResult throughput(int pairs, int messageBytes, double durationS, long reportEvery,
                boolean copy) {
            throw accepted();
        }
    }
}
