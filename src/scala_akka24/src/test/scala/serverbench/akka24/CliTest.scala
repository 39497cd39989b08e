package serverbench.akka24

import java.nio.file.Files

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import TestSupport._

/** The parser's own logic on a made-up spec that has what the real one may not have yet
  * (roles, per-language benchmarks, roles and variants, each kind of bound), and the
  * copy of spec/cli.json in the jar being current. Every flag and bad value of the real
  * spec is checked in process by ParserCasesTest (tests/conformance/parser-cases.json). */
class CliTest {
  private val testSpec = Cli.Spec.fromString(
    """{"languages": {
      |  "l1": {"benchmarks": ["b", "sock"], "variants": ["fair", "paper"], "roles": {"sock": ["server"]}},
      |  "l2": {"benchmarks": ["b"]}},
      | "benchmarks": {
      |  "b": {"flags": {
      |    "--n": {"param": "n", "type": "int", "min": 1, "max": 9223372036854775807, "required": true},
      |    "--t": {"param": "t", "type": "number", "min_exclusive": 0, "max": 0.5, "default": 0.25},
      |    "--k": {"param": "k", "type": "int", "min": 2, "max": 5, "default": 3},
      |    "--variant": {"param": null, "type": "enum", "values": ["fair", "paper"], "default": "fair"}}},
      |  "sock": {"roles": {
      |    "server": {"flags": {"--port": {"param": "port", "type": "int", "min": 0, "max": 65535, "required": true}}},
      |    "client": {"flags": {"--port": {"param": "port", "type": "int", "min": 1, "max": 65535, "required": true}}}}}},
      | "implemented_variants": ["fair"]}""".stripMargin)

  private def p(lang: String, args: String*) = Cli.parse(args, lang, testSpec)

  private def bad(mention: String, lang: String, args: String*): Unit = p(lang, args: _*) match {
    case Left(msg) => assertTrue(msg.contains(mention), s"$args: '$msg' should mention $mention")
    case Right(c) => fail(s"$args accepted as $c")
  }

  @Test def embeddedSpecIsCurrent(): Unit = {
    val inJar = new String(getClass.getClassLoader.getResourceAsStream(Cli.Spec.Resource).readAllBytes(), "UTF-8")
    assertEquals(new String(Files.readAllBytes(specDir.resolve("cli.json")), "UTF-8"), inJar,
      "the jar's cli.json is not spec/cli.json: rebuild (scripts/build.sh scala)")
  }

  @Test def parsesFromSpec(): Unit = {
    assertEquals(Right(Cli.Run("b", None, Some("paper"), Cli.Params(Map("n" -> Long.MaxValue, "t" -> 0.5, "k" -> 3L)))),
      p("l1", "b", "--n", "9223372036854775807", "--t=.5", "--variant", "paper"))
    assertEquals(Right(Cli.Run("b", None, Some("fair"), Cli.Params(Map("n" -> 1L, "t" -> 0.25, "k" -> 3L)))),
      p("l2", "b", "--n", "01"))
    assertEquals(Right(Cli.Run("sock", Some("server"), None, Cli.Params(Map("port" -> 0L)))),
      p("l1", "sock", "server", "--port", "0"))
    assertEquals(Right(Cli.Help), p("l1", "b", "--help"))
    assertEquals(Right(Cli.Version), p("l1", "--version"))
  }

  @Test def refusesPerSpec(): Unit = {
    bad("--n", "l1", "b", "--n", "9223372036854775808")
    bad("--t", "l1", "b", "--n", "1", "--t", "0")
    bad("--t", "l1", "b", "--n", "1", "--t", "0.5000001")
    bad("--t", "l1", "b", "--n", "1", "--t", "NaN")
    bad("--k", "l1", "b", "--n", "1", "--k", "6")
    bad("paper", "l2", "b", "--n", "1", "--variant", "paper")
    bad("--n: required", "l1", "b")
    bad("--n: missing value", "l1", "b", "--n", "--k", "3")
    bad("given more than once", "l1", "b", "--n", "1", "--n=1")
    bad("l2 does not implement the benchmark sock", "l2", "sock", "server", "--port", "0")
    bad("role client", "l1", "sock", "client", "--port", "1")
    bad("needs a role", "l1", "sock", "--port", "1")
    bad("unknown role", "l1", "sock", "peer")
    bad("--n: unknown flag", "l1", "sock", "server", "--n", "1")
    bad("unknown sub-command", "l1", "nope")
    bad("--version takes no value", "l1", "--version", "x")
  }

  @Test def realSpecParsesToTheBenchmarksArgs(): Unit = {
    Cli.parse(Seq("throughput", "--duration-s=1.5", "--message-bytes", "500", "--pairs", "2")) match {
      case Right(r: Cli.Run) => assertEquals(Cli.ThroughputArgs(2, 500, 1.5, 10000, payloadCopy = true, "fair"), Cli.ThroughputArgs(r))
      case other => fail(s"$other")
    }
  }

  @Test def everyListedBenchmarkHasARunner(): Unit = {
    val s = Cli.spec
    for (b <- s.languages(Main.Language).benchmarks) {
      val roles = s.benchmarks(b).roles.keys.toSeq
      val keys = if (roles.isEmpty) Seq(Main.runnerKey(b, None)) else
        s.languages(Main.Language).roles.getOrElse(b, roles).map(r => Main.runnerKey(b, Some(r)))
      keys.foreach(k => assertTrue(Main.runners.contains(k), s"$k: listed for ${Main.Language} in cli.json, no runner"))
    }
  }

  @Test def constantsMatchSpec(): Unit = {
    val m = cliJson.get("markers")
    assertEquals(m.get("pingping_a").asInt, Payload.PingA.toInt)
    assertEquals(m.get("pingping_b").asInt, Payload.PingB.toInt)
    assertEquals(m.get("throughput_server").asInt, Payload.Server.toInt)
    assertEquals(m.get("throughput_client").asInt, Payload.Client.toInt)
    assertEquals(cliJson.get("throughput_sample_min_interval_s").asDouble, Throughput.SampleMinIntervalS, 0.0)
  }
}
