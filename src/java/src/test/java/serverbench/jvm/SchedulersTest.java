package serverbench.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * runtime.schedulers follows the harness's setting: a second JVM started with the
 * language's command from spec/cli.json (its -XX/-D flags, {cores} = C) reports C. The
 * jar is replaced by the test class path and the language's main class.
 */
class SchedulersTest {
    private static JsonNode runWithCores(int cores, String... args) throws IOException, InterruptedException {
        JsonNode entry = TestSupport.languageEntry();
        String javaBin = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> cmd = new ArrayList<>();
        boolean jarSeen = false;
        for (JsonNode part : entry.get("command")) {
            String s = part.asText().replace("{cores}", Integer.toString(cores)).replace("{heap_mb}", "64");
            // "{java25}": the JDK the harness would find; the test JVM is that JDK (test.sh)
            if ((s.equals("java") || s.matches("\\{java[0-9]+\\}")) && cmd.isEmpty()) {
                cmd.add(javaBin);
            } else if (s.equals("-jar")) {
                jarSeen = true;
                cmd.add("-cp");
                cmd.add(System.getProperty("java.class.path"));
                cmd.add(TestSupport.mainClass());
            } else if (s.equals("{exe}")) {
                assertTrue(jarSeen, "{exe} follows -jar");
            } else {
                cmd.add(s);
            }
        }
        cmd.addAll(List.of(args));
        File out = File.createTempFile("serverbench-sched", ".out");
        File err = File.createTempFile("serverbench-sched", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out).redirectError(err).start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "second JVM did not finish: " + cmd);
            String stderr = Files.readString(err.toPath(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), cmd + "\n" + stderr);
            return TestSupport.MAPPER.readTree(out);
        } finally {
            out.delete();
            err.delete();
        }
    }

    @Test
    void reportsTheCoresTheHarnessAsksFor() throws Exception {
        for (int c : new int[] {1, 3}) {
            JsonNode v = runWithCores(c, "--version");
            assertEquals(c, v.at("/runtime/schedulers").asInt(), "--version with cores=" + c + ": " + v);
        }
        JsonNode r = runWithCores(3, "pingping", "--message-bytes", "50", "--repetitions", "20");
        assertEquals(3, r.at("/runtime/schedulers").asInt(), r.toString());
        assertTrue(r.at("/validation/ok").asBoolean());
        assertEquals(64L * 1024 * 1024, r.at("/runtime/max_heap_bytes").asLong(), "-Xmx{heap_mb}m took effect");
    }
}
