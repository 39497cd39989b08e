package serverbench.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Every flag of every benchmark the language implements (spec/cli.json, read from
 * ../../spec), every kind of bad input, and the benchmarks and variants it does not
 * implement. The language is the one named by the test's system properties.
 */
class CliTest {
    private final JsonNode cli = TestSupport.cliJson();
    private final int usageExit = cli.at("/exit_codes/usage").asInt();
    private final String lang = TestSupport.languageName();

    private List<String> implemented() {
        return Spec.stringsOf(TestSupport.languageEntry().path("benchmarks"));
    }

    private Map<String, JsonNode> flags(String bench) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        cli.path("benchmarks").path(bench).path("flags").fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    /** A value the flag accepts. */
    private static String goodValue(JsonNode f) {
        return switch (f.get("type").asText()) {
            case "int" -> f.get("min").asText();
            case "number" -> "0.25";
            case "enum" -> f.get("values").get(0).asText();
            default -> throw new IllegalStateException(f.toString());
        };
    }

    /** Required flags with good values, as name -> value. */
    private static Map<String, String> base(Map<String, JsonNode> flags) {
        Map<String, String> m = new LinkedHashMap<>();
        flags.forEach((n, f) -> {
            if (f.path("required").asBoolean(false)) {
                m.put(n, goodValue(f));
            }
        });
        return m;
    }

    private static List<String> argv(String bench, Map<String, String> kv, boolean inline) {
        List<String> a = new ArrayList<>();
        a.add(bench);
        kv.forEach((k, v) -> {
            if (inline) {
                a.add(k + "=" + v);
            } else {
                a.add(k);
                a.add(v);
            }
        });
        return a;
    }

    private void assertUsageError(List<String> args, String... mentions) {
        TestSupport.RunResult r = TestSupport.run(args);
        assertEquals(usageExit, r.code(), "exit code for " + args + "; stderr " + r.stderr());
        assertEquals("", r.stdout(), "stdout for " + args);
        List<String> lines = r.stderrLines();
        assertEquals(1, lines.size(), "stderr for " + args + ": " + r.stderr());
        assertTrue(lines.get(0).startsWith("error: "), lines.get(0));
        for (String m : mentions) {
            assertTrue(lines.get(0).contains(m), "'" + lines.get(0) + "' should name " + m);
        }
    }

    /** The bad values each flag type must refuse. */
    private static List<String> badValues(JsonNode f) {
        List<String> out = new ArrayList<>();
        switch (f.get("type").asText()) {
            case "int" -> {
                long min = f.get("min").asLong();
                out.addAll(List.of("-1", "abc", "1.5", "1e3", "+5", "0x10", "1_000", " 5",
                    new BigInteger(f.get("max").asText()).add(BigInteger.ONE).toString(), "99999999999999999999999"));
                if (min >= 1) {
                    out.add("0");
                }
                if (min >= 2) {
                    out.add(Long.toString(min - 1));
                }
            }
            case "number" -> {
                BigDecimal max = new BigDecimal(f.get("max").asText());
                out.addAll(List.of("0", "0.0", "-1", "-0.5", "abc", "nan", "NaN", "inf", "Infinity", "-inf", "1e400",
                    max.add(new BigDecimal("0.5")).toString(), max.add(BigDecimal.ONE).toString()));
            }
            case "enum" -> out.addAll(List.of("bogus", "", "COPY", "FAIR"));
            default -> throw new IllegalStateException(f.toString());
        }
        return out;
    }

    @Test
    void languageHasAnEntry() {
        assertTrue(TestSupport.languageEntry().isObject(), "spec/cli.json languages." + lang);
        assertTrue(implemented().contains("pingping"));
    }

    @Test
    void everyBadValueOfEveryFlagIsRefused() {
        int checked = 0;
        for (String bench : implemented()) {
            Map<String, JsonNode> flags = flags(bench);
            for (Map.Entry<String, JsonNode> e : flags.entrySet()) {
                for (String bad : badValues(e.getValue())) {
                    Map<String, String> kv = base(flags);
                    kv.remove(e.getKey());
                    kv.put(e.getKey(), bad);
                    assertUsageError(argv(bench, kv, false), e.getKey());
                    assertUsageError(argv(bench, kv, true), e.getKey());
                    checked++;
                }
            }
        }
        assertTrue(checked > 20, "checked " + checked);
    }

    @Test
    void missingValueDuplicateAndMissingRequired() {
        for (String bench : implemented()) {
            Map<String, JsonNode> flags = flags(bench);
            for (Map.Entry<String, JsonNode> e : flags.entrySet()) {
                String name = e.getKey();
                Map<String, String> others = base(flags);
                others.remove(name);
                List<String> atEnd = argv(bench, others, false);
                atEnd.add(name);
                assertUsageError(atEnd, name); // value missing at the end
                List<String> nextIsFlag = new ArrayList<>(List.of(bench, name));
                nextIsFlag.addAll(argv(bench, others, false).subList(1, argv(bench, others, false).size()));
                if (!others.isEmpty()) {
                    assertUsageError(nextIsFlag, name); // next token is a flag
                }
                List<String> empty = argv(bench, others, false);
                empty.add(name + "=");
                assertUsageError(empty, name);
                List<String> twice = argv(bench, others, false);
                twice.addAll(List.of(name, goodValue(e.getValue()), name, goodValue(e.getValue())));
                assertUsageError(twice, name);
                if (e.getValue().path("required").asBoolean(false)) {
                    assertUsageError(argv(bench, others, false), name);
                }
            }
        }
    }

    @Test
    void unknownFlagSubCommandAndStrays() {
        for (String bench : implemented()) {
            Map<String, String> kv = base(flags(bench));
            kv.put("--bogus", "1");
            assertUsageError(argv(bench, kv, false), "--bogus");
            List<String> stray = argv(bench, base(flags(bench)), false);
            stray.add("stray");
            assertUsageError(stray, "stray");
        }
        assertUsageError(List.of("pingpong", "--message-bytes", "1"), "pingpong");
        assertUsageError(List.of("--message-bytes", "1"), "--message-bytes");
        assertUsageError(List.of(), "sub-command");
    }

    /** Every benchmark of the contract that this language does not implement: exit 2 naming both. */
    @Test
    void unimplementedBenchmarksAreRefusedNamingLanguageAndBenchmark() {
        int refused = 0;
        java.util.Iterator<String> it = cli.path("benchmarks").fieldNames();
        while (it.hasNext()) {
            String bench = it.next();
            if (implemented().contains(bench)) {
                continue;
            }
            assertUsageError(List.of(bench), lang, bench);
            // even with that benchmark's own required flags (or a role), and with --help
            List<String> withFlags = argv(bench, base(flags(bench)), false);
            assertUsageError(withFlags, lang, bench);
            assertUsageError(List.of(bench, "server", "--port", "0"), lang, bench);
            assertUsageError(List.of(bench, "--help"), lang, bench);
            refused++;
        }
        assertTrue(refused >= 2, "spawn and throughput at least: " + refused);
    }

    @Test
    void unimplementedVariantIsRefused() {
        List<String> variants = Spec.stringsOf(TestSupport.languageEntry().path("variants"));
        assertEquals(List.of("fair"), variants);
        for (String bench : implemented()) {
            for (JsonNode v : flags(bench).get("--variant").get("values")) {
                Map<String, String> kv = base(flags(bench));
                kv.put("--variant", v.asText());
                if (variants.contains(v.asText())) {
                    assertParses(argv(bench, kv, false));
                } else {
                    assertUsageError(argv(bench, kv, false), "--variant", lang);
                }
            }
        }
    }

    private void assertParses(List<String> args) {
        try {
            assertInstanceOf(Cli.Run.class, new Cli(Spec.builtIn(), lang).parse(args), args.toString());
        } catch (Cli.UsageError e) {
            throw new AssertionError(args + ": " + e.getMessage(), e);
        }
    }

    /** Good command lines in any order and either spelling parse, with every default applied. */
    @Test
    void goodCommandLinesParseWithDefaults() throws Cli.UsageError {
        Cli c = new Cli(Spec.builtIn(), lang);
        for (String bench : implemented()) {
            Map<String, JsonNode> flags = flags(bench);
            Map<String, String> all = new LinkedHashMap<>();
            flags.forEach((n, f) -> {
                if (!n.equals("--variant") && !f.has("knob")) {
                    all.put(n, goodValue(f));
                }
            });
            List<Map.Entry<String, String>> reversed = new ArrayList<>(all.entrySet());
            java.util.Collections.reverse(reversed);
            Map<String, String> rev = new LinkedHashMap<>();
            reversed.forEach(e -> rev.put(e.getKey(), e.getValue()));
            for (Map<String, String> order : List.of(all, rev)) {
                assertParses(argv(bench, order, false));
                assertParses(argv(bench, order, true));
            }
            // Only the required flags: every other param gets the spec's default.
            Cli.Run r = (Cli.Run) c.parse(argv(bench, base(flags), false));
            assertEquals("fair", r.variant());
            flags.forEach((n, f) -> {
                JsonNode p = f.get("param");
                if (p != null && !p.isNull() && f.has("default") && !f.has("knob")) {
                    assertEquals(f.get("default").asText(), String.valueOf(r.params().get(p.asText())), bench + " " + n);
                }
            });
        }
        Cli.Run r = (Cli.Run) c.parse(List.of("pingping", "--repetitions", "1000000000", "--payload", "share",
            "--message-bytes=67108864"));
        assertEquals(67108864L, r.intParam("message_bytes"));
        assertEquals(1000000000L, r.intParam("repetitions"));
        assertEquals("share", r.stringParam("payload"));
    }

    /**
     * Variant knobs (cli.json "knob"): a knob this language lacks takes only its default
     * "variant"; one it has must agree with --variant fair|paper. Knobs are never params.
     */
    @Test
    void knobFlagsFollowTheirRules() throws Cli.UsageError {
        Cli c = new Cli(Spec.builtIn(), lang);
        int checked = 0;
        for (String bench : implemented()) {
            Map<String, JsonNode> flags = flags(bench);
            for (Map.Entry<String, JsonNode> e : flags.entrySet()) {
                JsonNode knob = e.getValue().get("knob");
                if (knob == null) {
                    continue;
                }
                boolean mine = Spec.stringsOf(knob.path("languages")).contains(lang);
                Map<String, String> kv = base(flags);
                if (mine) {
                    kv.put(e.getKey(), "variant");
                    Cli.Run r = (Cli.Run) c.parse(argv(bench, kv, false));
                    assertTrue(!r.params().containsKey(e.getValue().get("param").asText()), "a knob is not a param");
                }
                for (JsonNode v : e.getValue().get("values")) {
                    // a knob this language lacks is refused at any value, "variant" included
                    kv.put(e.getKey(), v.asText());
                    if (!mine) {
                        assertUsageError(argv(bench, kv, false), e.getKey(), lang);
                        checked++;
                    }
                }
            }
        }
        if (lang.equals("java") || lang.equals("scala_actors")) {
            assertTrue(checked > 0, "pingping has knobs of other languages");
        }
    }

    @Test
    void helpAndVersionAreNotBenchmarks() throws Cli.UsageError {
        Cli c = new Cli(Spec.builtIn(), lang);
        assertInstanceOf(Cli.Help.class, c.parse(List.of("--help")));
        assertInstanceOf(Cli.Help.class, c.parse(List.of("pingping", "--help")));
        assertInstanceOf(Cli.Version.class, c.parse(List.of("--version")));
    }
}
