package serverbench.jvm;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;

/**
 * Shared by the java and scala_actors test suites (scala_actors compiles this package's
 * tests from ../java too). The language under test is the class named by the system
 * property {@code serverbench.test.language} (a {@link Language}), its main class
 * {@code serverbench.test.main}; both are set in the module's pom. The contract is read
 * from ../../spec (never a copy).
 */
public final class TestSupport {
    public static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonNode cli;
    private static JsonNode schemaJson;

    private TestSupport() {}

    public static Path specDir() {
        Path p = Paths.get(System.getProperty("serverbench.spec.dir", "../../spec"));
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("spec directory not found: " + p);
        }
        return p.toAbsolutePath().normalize();
    }

    public static synchronized JsonNode cliJson() {
        if (cli == null) {
            cli = read(specDir().resolve("cli.json"));
        }
        return cli;
    }

    private static synchronized JsonNode recordSchemaJson() {
        if (schemaJson == null) {
            schemaJson = read(specDir().resolve("native-record.schema.json"));
        }
        return schemaJson;
    }

    private static JsonNode read(Path p) {
        try {
            return MAPPER.readTree(p.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Language language() {
        String cls = System.getProperty("serverbench.test.language");
        if (cls == null) {
            throw new IllegalStateException("system property serverbench.test.language is not set (see pom.xml)");
        }
        try {
            return (Language) Class.forName(cls).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create " + cls, e);
        }
    }

    public static String mainClass() {
        return System.getProperty("serverbench.test.main");
    }

    public static String languageName() {
        return language().name();
    }

    /** spec/cli.json languages.L for the language under test. */
    public static JsonNode languageEntry() {
        return cliJson().path("languages").path(languageName());
    }

    /** The whole record schema, or one of its $defs as the root (same $defs, so local $refs resolve). */
    public static JsonSchema schema(String defName) {
        ObjectNode root = recordSchemaJson().deepCopy();
        root.remove("$id"); // relative: names no retrievable place
        if (defName != null) {
            root.remove("oneOf");
            root.put("$ref", "#/$defs/" + defName);
        }
        return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(root);
    }

    public static List<String> errors(JsonSchema s, JsonNode n) {
        List<String> out = new ArrayList<>();
        for (ValidationMessage m : s.validate(n)) {
            out.add(m.getMessage());
        }
        return out;
    }

    public record RunResult(int code, String stdout, String stderr) {
        public List<String> lines() {
            List<String> out = new ArrayList<>();
            for (String l : stdout.split("\n", -1)) {
                if (!l.isEmpty()) {
                    out.add(l);
                }
            }
            return out;
        }

        public List<String> stderrLines() {
            List<String> out = new ArrayList<>();
            for (String l : stderr.split("\n", -1)) {
                if (!l.isEmpty()) {
                    out.add(l);
                }
            }
            return out;
        }

        public JsonNode json() {
            try {
                return MAPPER.readTree(stdout);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Runs the language's launcher in-process with captured stdout and stderr. */
    public static RunResult run(String... args) {
        return run(Arrays.asList(args));
    }

    public static RunResult run(List<String> args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = Launcher.run(args.toArray(new String[0]), new PrintStream(o, true, StandardCharsets.UTF_8),
            new PrintStream(e, true, StandardCharsets.UTF_8), language());
        return new RunResult(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }
}
