package serverbench.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The records the language prints validate against spec/native-record.schema.json and count exactly. */
class RecordTest {
    private final String lang = TestSupport.languageName();

    private JsonNode validRecord(String... args) {
        TestSupport.RunResult r = TestSupport.run(args);
        assertEquals(0, r.code(), "exit code; stderr: " + r.stderr());
        assertEquals(1, r.lines().size(), "stdout must be one line: " + r.stdout());
        assertTrue(r.stdout().endsWith("\n"));
        assertEquals("", r.stderr());
        List<String> errs = TestSupport.errors(TestSupport.schema(null), r.json());
        assertTrue(errs.isEmpty(), "schema errors " + errs + " in " + r.stdout());
        JsonNode j = r.json();
        assertEquals(lang, j.get("language").asText());
        assertEquals("fair", j.get("variant").asText());
        assertTrue(j.at("/validation/ok").asBoolean());
        assertTrue(j.at("/runtime/schedulers").asInt() >= 1);
        return j;
    }

    @Test
    void pingpingCopyExactCounts() {
        JsonNode j = validRecord("pingping", "--message-bytes", "300", "--repetitions", "500");
        assertEquals(500, j.at("/validation/received_a").asLong());
        assertEquals(500, j.at("/validation/received_b").asLong());
        assertEquals(0, j.at("/validation/payload_errors").asLong());
        assertEquals(1000, j.at("/metrics/messages").asLong());
        assertEquals("copy", j.at("/params/payload").asText());
        assertEquals(300, j.at("/params/message_bytes").asLong());
        double ns = j.at("/metrics/ns_per_message").asDouble();
        assertEquals(j.at("/metrics/elapsed_s").asDouble() * 1e9 / 1000, ns, ns * 1e-6);
    }

    @Test
    void pingpingShareAndTinyMessages() {
        JsonNode j = validRecord("pingping", "--payload=share", "--repetitions=1", "--message-bytes=1");
        assertEquals(1, j.at("/validation/received_a").asLong());
        assertEquals(1, j.at("/validation/received_b").asLong());
        assertEquals(2, j.at("/metrics/messages").asLong());
        assertEquals("share", j.at("/params/payload").asText());
    }

    @Test
    void pingpingOddSizesBothModes() {
        for (String payload : List.of("copy", "share")) {
            JsonNode j = validRecord("pingping", "--message-bytes", "257", "--repetitions", "3", "--payload", payload);
            assertEquals(3, j.at("/validation/received_b").asLong());
        }
    }

    @Test
    void versionValidates() {
        TestSupport.RunResult r = TestSupport.run("--version");
        assertEquals(0, r.code());
        assertEquals(1, r.lines().size());
        List<String> errs = TestSupport.errors(TestSupport.schema("version_info"), r.json());
        assertTrue(errs.isEmpty(), "schema errors " + errs + " in " + r.stdout());
        assertEquals("serverbench", r.json().get("program").asText());
        assertEquals(lang, r.json().get("language").asText());
        assertTrue(r.json().at("/runtime/version").asText().contains(System.getProperty("java.version")));
    }

    @Test
    void helpListsOnlyImplementedBenchmarks() {
        TestSupport.RunResult r = TestSupport.run("--help");
        assertEquals(0, r.code());
        assertTrue(r.stdout().contains("usage"));
        for (String bench : List.of("pingping", "spawn", "throughput", "tcp_pingpong")) {
            boolean listed = TestSupport.languageEntry().get("benchmarks").toString().contains("\"" + bench + "\"");
            assertEquals(listed, r.stdout().contains(bench + " --"), bench + " in\n" + r.stdout());
        }
    }

    /** The validator is not vacuous: broken records are refused. */
    @Test
    void schemaRejectsBrokenRecords() {
        JsonNode good = TestSupport.run("pingping", "--message-bytes", "10", "--repetitions", "3").json();
        assertTrue(TestSupport.errors(TestSupport.schema(null), good).isEmpty());
        List<Consumer<ObjectNode>> breakers = List.of(
            b -> b.remove("metrics"),
            b -> b.put("extra", 1),
            b -> b.put("language", "cobol"),
            b -> ((ObjectNode) b.get("validation")).put("received_a", -1),
            b -> ((ObjectNode) b.get("runtime")).put("schedulers", 0),
            b -> ((ObjectNode) b.get("metrics")).put("messages", "2"));
        for (Consumer<ObjectNode> br : breakers) {
            ObjectNode b = good.deepCopy();
            br.accept(b);
            assertFalse(TestSupport.errors(TestSupport.schema(null), b).isEmpty(), "accepted " + b);
        }
        assertFalse(TestSupport.errors(TestSupport.schema("version_info"), good).isEmpty(), "a run record is not a version_info");
    }

    /** The jar carries the cli.json it was built from; a stale build would read an old contract. */
    @Test
    void builtInSpecIsTheCheckedInOne() {
        assertEquals(TestSupport.cliJson(), Spec.builtIn().root());
    }
}
