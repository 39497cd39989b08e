package serverbench.jvm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The parts of spec/cli.json this program needs, read from the copy Maven builds into the
 * jar (resource {@value #RESOURCE}). Nothing of the command line is written in the source:
 * flag names, types, ranges, defaults, the benchmarks and variants a language implements,
 * markers and exit codes all come from here.
 */
public final class Spec {
    public static final String RESOURCE = "/serverbench/cli.json";

    private static volatile Spec builtIn;

    private final JsonNode root;

    public Spec(JsonNode root) {
        this.root = root;
    }

    /** The cli.json built into the jar. */
    public static Spec builtIn() {
        Spec s = builtIn;
        if (s == null) {
            try (InputStream in = Spec.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is missing from the jar (rebuild with Maven)");
                }
                s = new Spec(new ObjectMapper().readTree(in));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + RESOURCE, e);
            }
            builtIn = s;
        }
        return s;
    }

    public JsonNode root() {
        return root;
    }

    /** Every benchmark of the contract, in the file's order. */
    public List<String> benchmarks() {
        return names(root.path("benchmarks"));
    }

    /** benchmarks.B.flags: flag name -> its spec object, in the file's order. */
    public Map<String, JsonNode> flags(String benchmark) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        root.path("benchmarks").path(benchmark).path("flags").fields()
            .forEachRemaining(e -> m.put(e.getKey(), e.getValue()));
        return Collections.unmodifiableMap(m);
    }

    /** languages.L.benchmarks (absent: every benchmark). */
    public List<String> languageBenchmarks(String language) {
        JsonNode b = language(language).get("benchmarks");
        return b == null ? benchmarks() : stringsOf(b);
    }

    /** languages.L.variants (absent: the top-level implemented_variants). */
    public List<String> languageVariants(String language) {
        JsonNode v = language(language).get("variants");
        return stringsOf(v != null ? v : root.path("implemented_variants"));
    }

    public int marker(String name) {
        return required(root.path("markers").path(name), "markers." + name).asInt();
    }

    public int exitCode(String name) {
        return required(root.path("exit_codes").path(name), "exit_codes." + name).asInt();
    }

    public String program() {
        return root.path("program").asText("serverbench");
    }

    private JsonNode language(String language) {
        return required(root.path("languages").path(language), "languages." + language);
    }

    private static JsonNode required(JsonNode n, String what) {
        if (n.isMissingNode() || n.isNull()) {
            throw new IllegalStateException("spec/cli.json has no " + what);
        }
        return n;
    }

    private static List<String> names(JsonNode obj) {
        List<String> out = new ArrayList<>();
        obj.fieldNames().forEachRemaining(out::add);
        return Collections.unmodifiableList(out);
    }

    public static List<String> stringsOf(JsonNode arr) {
        List<String> out = new ArrayList<>();
        arr.forEach(x -> out.add(x.asText()));
        return Collections.unmodifiableList(out);
    }
}
