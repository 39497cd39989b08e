package serverbench.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The command line of spec/cli.json (docs/spec.md section 1), driven entirely by the flag
 * table in {@link Spec}: every bad input gives the contract's answer, one {@code error: ...}
 * line naming the flag (or the sub-command, language and benchmark), exit 2, nothing on
 * stdout. The same rules as the Scala/Akka, Go and Erlang programs.
 */
public final class Cli {
    /** What the command line asks for. */
    public sealed interface Command permits Help, Version, Run {}

    public record Help() implements Command {}

    public record Version() implements Command {}

    /**
     * A benchmark run: params maps each flag's {@code param} name to its value (Long for
     * int, Double for number, String for enum), defaults included, in the spec's order.
     */
    public record Run(String benchmark, String variant, Map<String, Object> params) implements Command {
        public long intParam(String name) {
            return (Long) params.get(name);
        }

        public double numberParam(String name) {
            return ((Number) params.get(name)).doubleValue();
        }

        public String stringParam(String name) {
            return (String) params.get(name);
        }
    }

    /** A bad command line; the message has no "error: " prefix. */
    public static final class UsageError extends Exception {
        private static final long serialVersionUID = 1L;

        public UsageError(String message) {
            super(message);
        }
    }

    private static final Pattern INT = Pattern.compile("[0-9]+");
    private static final Pattern NUM = Pattern.compile("[0-9]+(\\.[0-9]+)?|\\.[0-9]+");

    private final Spec spec;
    private final String language;

    public Cli(Spec spec, String language) {
        this.spec = spec;
        this.language = language;
    }

    public Command parse(List<String> args) throws UsageError {
        List<String> implemented = spec.languageBenchmarks(language);
        if (args.isEmpty()) {
            throw new UsageError("missing sub-command (" + String.join(", ", implemented) + ", --version, --help)");
        }
        String cmd = args.get(0);
        if (cmd.equals("--help") || cmd.equals("-h")) {
            return new Help();
        }
        if (cmd.equals("--version")) {
            if (args.size() > 1) {
                throw new UsageError("--version takes no value (got '" + args.get(1) + "')");
            }
            return new Version();
        }
        if (!spec.benchmarks().contains(cmd)) {
            throw new UsageError("unknown sub-command '" + cmd + "' (expected " + String.join(", ", implemented) + ")");
        }
        if (!implemented.contains(cmd)) {
            throw new UsageError(language + " does not implement the benchmark " + cmd
                + " (" + language + " implements: " + String.join(", ", implemented) + ")");
        }
        List<String> rest = args.subList(1, args.size());
        if (rest.contains("--help")) {
            return new Help();
        }
        return collect(cmd, spec.flags(cmd), rest);
    }

    private Run collect(String cmd, Map<String, JsonNode> flags, List<String> rest) throws UsageError {
        Map<String, String> values = new LinkedHashMap<>();
        int i = 0;
        while (i < rest.size()) {
            String tok = rest.get(i);
            if (!tok.startsWith("--")) {
                throw new UsageError("unexpected argument '" + tok + "' (flags are --name value)");
            }
            int eq = tok.indexOf('=');
            String name = eq >= 0 ? tok.substring(0, eq) : tok;
            JsonNode flag = flags.get(name);
            if (flag == null) {
                throw new UsageError(name + ": unknown flag for " + cmd);
            }
            if (isForeignKnob(flag)) {
                throw new UsageError(name + ": a knob of the paper variant that " + language + " does not have ("
                    + cmd + ")");
            }
            if (values.containsKey(name)) {
                throw new UsageError(name + ": given more than once");
            }
            String value;
            if (eq >= 0) {
                value = tok.substring(eq + 1);
                i += 1;
            } else {
                // A following "--x" is the next flag, not this one's value ("-5" is a value, and refused as a number).
                if (i + 1 >= rest.size() || rest.get(i + 1).startsWith("--")) {
                    throw new UsageError(name + ": missing value");
                }
                value = rest.get(i + 1);
                i += 2;
            }
            if (value.isEmpty()) {
                throw new UsageError(name + ": missing value");
            }
            check(name, flag, value);
            values.put(name, value);
        }

        Map<String, Object> params = new LinkedHashMap<>();
        Map<String, String> knobs = new LinkedHashMap<>();
        String variant = null;
        for (Map.Entry<String, JsonNode> e : flags.entrySet()) {
            String name = e.getKey();
            JsonNode flag = e.getValue();
            if (isForeignKnob(flag)) {
                continue;
            }
            String v = values.get(name);
            if (v == null) {
                if (flag.path("required").asBoolean(false)) {
                    throw new UsageError(name + ": required flag missing");
                }
                JsonNode d = flag.get("default");
                if (d == null || d.isNull()) {
                    continue; // optional without default: absent from params
                }
                v = d.asText();
            }
            JsonNode param = flag.get("param");
            if (param == null || param.isNull()) {
                if (name.equals("--variant")) {
                    variant = v;
                }
                continue;
            }
            if (flag.has("knob")) {
                knobs.put(name, v); // a variant knob, not a record param: checked below
                continue;
            }
            params.put(param.asText(), typed(flag, v));
        }
        if (variant == null) {
            variant = "fair";
        }
        List<String> variants = spec.languageVariants(language);
        if (!variants.contains(variant)) {
            throw new UsageError("--variant: '" + variant + "' is not built for " + language + " " + cmd
                + " (implemented: " + String.join(", ", variants) + ")");
        }
        for (Map.Entry<String, String> k : knobs.entrySet()) {
            checkKnob(k.getKey(), flags.get(k.getKey()), k.getValue(), variant);
        }
        return new Run(cmd, variant, params);
    }

    /**
     * docs/spec.md "variants": a knob flag (cli.json "knob") defaults to "variant". A knob
     * the language does not have takes no other value; one it has must agree with
     * --variant fair|paper (any value under mixed). java and scala_actors have none.
     */
    private void checkKnob(String name, JsonNode flag, String v, String variant) throws UsageError {
        if (v.equals("variant")) {
            return;
        }
        JsonNode knob = flag.get("knob");
        List<String> langs = Spec.stringsOf(knob.path("languages"));
        if (!langs.contains(language)) {
            throw new UsageError(name + ": not a knob of " + language + " (only of " + String.join(", ", langs)
                + "); leave it at 'variant'");
        }
        JsonNode fixed = knob.get(variant);
        if (fixed != null && fixed.isObject()) {
            fixed = fixed.get(language);
        }
        if (fixed != null && !fixed.isNull() && !fixed.asText().equals(v)) {
            throw new UsageError(name + ": '" + v + "' contradicts --variant " + variant + " (which means "
                + fixed.asText() + " for " + language + ")");
        }
    }

    /** A flag of the paper variant's knobs (cli.json "knob") that this language does not list. */
    private boolean isForeignKnob(JsonNode flag) {
        JsonNode knob = flag.get("knob");
        if (knob == null) {
            return false;
        }
        for (JsonNode l : knob.path("languages")) {
            if (l.asText().equals(language)) {
                return false;
            }
        }
        return true;
    }

    private static void check(String name, JsonNode flag, String v) throws UsageError {
        String type = flag.path("type").asText();
        switch (type) {
            case "int" -> {
                if (!INT.matcher(v).matches()) {
                    throw new UsageError(name + ": '" + v + "' is not a plain decimal integer");
                }
                BigInteger n = new BigInteger(v);
                if (flag.has("min") && n.compareTo(flag.get("min").bigIntegerValue()) < 0) {
                    throw new UsageError(name + ": " + v + " is below the minimum " + flag.get("min").asText());
                }
                if (flag.has("max") && n.compareTo(flag.get("max").bigIntegerValue()) > 0) {
                    throw new UsageError(name + ": " + v + " is above the maximum " + flag.get("max").asText());
                }
            }
            case "number" -> {
                if (!NUM.matcher(v).matches()) {
                    throw new UsageError(name + ": '" + v + "' is not a decimal number");
                }
                BigDecimal d = new BigDecimal(v);
                if (flag.has("min_exclusive") && d.compareTo(flag.get("min_exclusive").decimalValue()) <= 0) {
                    throw new UsageError(name + ": " + v + " must be greater than " + flag.get("min_exclusive").asText());
                }
                if (flag.has("min") && d.compareTo(flag.get("min").decimalValue()) < 0) {
                    throw new UsageError(name + ": " + v + " is below the minimum " + flag.get("min").asText());
                }
                if (flag.has("max") && d.compareTo(flag.get("max").decimalValue()) > 0) {
                    throw new UsageError(name + ": " + v + " is above the maximum " + flag.get("max").asText());
                }
            }
            case "enum" -> {
                boolean found = false;
                for (JsonNode x : flag.path("values")) {
                    found |= x.asText().equals(v);
                }
                if (!found) {
                    StringBuilder sb = new StringBuilder();
                    flag.path("values").forEach(x -> sb.append(sb.length() == 0 ? "" : ", ").append(x.asText()));
                    throw new UsageError(name + ": '" + v + "' is not one of " + sb);
                }
            }
            default -> throw new IllegalStateException("spec/cli.json: flag " + name + " has unknown type '" + type + "'");
        }
    }

    private static Object typed(JsonNode flag, String v) {
        return switch (flag.path("type").asText()) {
            case "int" -> Long.valueOf(v);
            case "number" -> Double.valueOf(v);
            default -> v;
        };
    }

    /** --help: generated from the same table. */
    public String usage(String program) {
        StringBuilder sb = new StringBuilder("usage:\n");
        for (String b : spec.languageBenchmarks(language)) {
            sb.append("  ").append(program).append(' ').append(b);
            for (Map.Entry<String, JsonNode> e : spec.flags(b).entrySet()) {
                JsonNode f = e.getValue();
                if (f.has("knob") && !Spec.stringsOf(f.path("knob").path("languages")).contains(language)) {
                    continue; // a knob of other languages
                }
                boolean isVariant = f.path("param").isNull() && e.getKey().equals("--variant");
                String meta = isVariant
                    ? String.join("|", spec.languageVariants(language))
                    : f.path("type").asText().equals("enum")
                    ? String.join("|", Spec.stringsOf(f.path("values")))
                    : f.path("param").asText("X").toUpperCase(java.util.Locale.ROOT);
                String one = e.getKey() + " " + meta;
                sb.append(' ').append(f.path("required").asBoolean(false) ? one : "[" + one + "]");
            }
            sb.append('\n');
        }
        sb.append("  ").append(program).append(" --version\n");
        sb.append("  ").append(program).append(" --help\n");
        sb.append("Prints one JSON record on stdout (").append(language).append(" implements only: ")
            .append(String.join(", ", spec.languageBenchmarks(language))).append(").");
        return sb.toString();
    }
}
