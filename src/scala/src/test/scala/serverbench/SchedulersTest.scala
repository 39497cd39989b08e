package serverbench

import java.nio.charset.StandardCharsets
import java.nio.file.Paths
import java.util.concurrent.TimeUnit

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import com.typesafe.config.ConfigFactory

import Rt.Converters._

import TestSupport._

/** runtime.schedulers is what the dispatcher really uses, set the way the harness sets it. */
class SchedulersTest {
  private val Prefix = s"${Rt.ConfigPrefix}.actor.default-dispatcher.fork-join-executor"

  @Test def configOverrideIsReported(): Unit = {
    val cfg = ConfigFactory.parseString(s"$Prefix.parallelism-min = 3\n$Prefix.parallelism-max = 3").withFallback(ConfigFactory.load())
    val r = run(Seq("--version"), cfg)
    assertEquals(0, r.code)
    assertEquals(3, r.json.at("/runtime/schedulers").asInt)
    assertEquals(3, RuntimeInfo.configuredParallelism(cfg))
  }

  /** A second JVM started like spec/cli.json's command (class path instead of -jar, since
    * the jar is built after the tests): -D flags reach the runtime, stdout has exactly one line. */
  @Test def forkedJvmWithHarnessFlags(): Unit = {
    val javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    for (c <- Seq(1, 3)) {
      val cmd = Seq(javaBin, s"-XX:ActiveProcessorCount=$c", "-Xms64m", "-Xmx64m", "-Xss512k",
        s"-D$Prefix.parallelism-min=$c", s"-D$Prefix.parallelism-max=$c",
        "-cp", System.getProperty("java.class.path"), "serverbench.Main",
        "pingping", "--message-bytes", "100", "--repetitions", "50")
      val p = new ProcessBuilder(cmd.asJava).redirectError(ProcessBuilder.Redirect.DISCARD).start()
      val out = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8)
      assertTrue(p.waitFor(120, TimeUnit.SECONDS))
      assertEquals(0, p.exitValue(), out)
      val lines = out.split("\n").toSeq
      assertEquals(1, lines.size, out)
      val j = mapper.readTree(lines.head)
      assertTrue(errors(recordSchema, j).isEmpty)
      assertEquals(c, j.at("/runtime/schedulers").asInt)
      assertEquals((64L * 1024 * 1024).toDouble, j.at("/runtime/max_heap_bytes").asLong.toDouble, 8.0 * 1024 * 1024)
    }
  }
}
