package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import com.fasterxml.jackson.databind.JsonNode

import scala.jdk.CollectionConverters._

import TestSupport._

/** Every flag of every benchmark in spec/cli.json, and every kind of bad input. */
class CliTest {
  private val usageExit = cliJson.at("/exit_codes/usage").asInt

  private def benchmarks: Seq[(String, Seq[(String, JsonNode)])] =
    fields(cliJson.get("benchmarks")).map { case (b, n) => b -> fields(n.get("flags")).toSeq }.toSeq

  /** A value the flag accepts. */
  private def goodValue(f: JsonNode): String = f.get("type").asText match {
    case "int" => f.get("min").asText
    case "number" => "0.25"
    case "enum" => f.get("values").get(0).asText
  }

  /** Required flags with good values, as `--name value`. */
  private def base(flags: Seq[(String, JsonNode)]): Seq[(String, String)] =
    flags.collect { case (name, f) if f.path("required").asBoolean(false) => name -> goodValue(f) }

  private def argv(bench: String, kv: Seq[(String, String)]): Seq[String] = bench +: kv.flatMap { case (k, v) => Seq(k, v) }

  private def assertUsageError(args: Seq[String], mentions: String): Unit = {
    val r = run(args)
    assertEquals(usageExit, r.code, s"exit code for $args; stderr ${r.stderr}")
    assertEquals("", r.stdout, s"stdout for $args")
    val lines = r.stderr.split("\n").toSeq.filter(_.nonEmpty)
    assertEquals(1, lines.size, s"stderr for $args: ${r.stderr}")
    assertTrue(lines.head.startsWith("error: "), lines.head)
    assertTrue(lines.head.contains(mentions), s"'${lines.head}' should name $mentions")
  }

  /** The bad values that each flag type must refuse. */
  private def badValues(f: JsonNode): Seq[String] = f.get("type").asText match {
    case "int" =>
      val min = f.get("min").asLong
      Seq("-1", "abc", "1.5", "1e3", "+5", "0x10", "1_000", " 5", (BigInt(f.get("max").asText) + 1).toString,
        "99999999999999999999999") ++ (if (min >= 1) Seq("0") else Nil) ++ (if (min >= 2) Seq((min - 1).toString) else Nil)
    case "number" =>
      val max = BigDecimal(f.get("max").asText)
      Seq("0", "0.0", "-1", "-0.5", "abc", "nan", "NaN", "inf", "Infinity", "-inf", "1e400", (max + 0.5).toString, (max + 1).toString)
    case "enum" => Seq("bogus", "", "COPY", "FAIR")
  }

  @Test def everyBadValueOfEveryFlagIsRefused(): Unit = {
    var checked = 0
    for ((bench, flags) <- benchmarks; (name, f) <- flags; bad <- badValues(f)) {
      val kv = base(flags).filterNot(_._1 == name) :+ (name -> bad)
      val mixed = argv(bench, kv)
      // both spellings
      assertUsageError(mixed, name)
      assertUsageError(bench +: kv.map { case (k, v) => s"$k=$v" }, name)
      checked += 1
    }
    assertTrue(checked > 50)
  }

  @Test def missingValueDuplicateAndMissingRequired(): Unit = {
    for ((bench, flags) <- benchmarks; (name, f) <- flags) {
      val others = base(flags).filterNot(_._1 == name)
      assertUsageError(argv(bench, others) :+ name, name) // value missing at the end
      assertUsageError(bench +: name +: argv("", others).tail, name) // next token is a flag
      assertUsageError(argv(bench, others) :+ s"$name=", name) // empty value
      val twice = others :+ (name -> goodValue(f)) :+ (name -> goodValue(f))
      assertUsageError(argv(bench, twice), name)
      if (f.path("required").asBoolean(false)) assertUsageError(argv(bench, others), name)
    }
  }

  @Test def unknownFlagSubCommandAndStrays(): Unit = {
    for ((bench, flags) <- benchmarks) {
      assertUsageError(argv(bench, base(flags) :+ ("--bogus" -> "1")), "--bogus")
      assertUsageError(argv(bench, base(flags)) :+ "--processes-x=3", "--processes-x")
      assertUsageError(argv(bench, base(flags)) :+ "stray", "stray")
    }
    assertUsageError(Seq("pingpong", "--message-bytes", "1"), "pingpong")
    assertUsageError(Seq("--message-bytes", "1"), "--message-bytes")
    assertUsageError(Seq(), "sub-command")
  }

  @Test def unimplementedVariantIsRefused(): Unit = {
    val implemented = cliJson.get("implemented_variants").elements().asScala.map(_.asText).toSet
    assertEquals(implemented, Cli.implementedVariants)
    for ((bench, flags) <- benchmarks; v <- flags.toMap.apply("--variant").get("values").elements().asScala.map(_.asText)) {
      val args = argv(bench, base(flags) :+ ("--variant" -> v))
      if (implemented(v)) assertTrue(Cli.parse(args).isRight, s"$args")
      else assertUsageError(args, "--variant")
    }
  }

  /** Good command lines in any order and either spelling parse, with defaults applied. */
  @Test def goodCommandLinesParse(): Unit = {
    for ((bench, flags) <- benchmarks) {
      val all = flags.filter(_._1 != "--variant").map { case (n, f) => n -> goodValue(f) }
      for (order <- Seq(all, all.reverse)) {
        assertTrue(Cli.parse(argv(bench, order)).isRight)
        assertTrue(Cli.parse(bench +: order.map { case (k, v) => s"$k=$v" }).isRight)
      }
    }
    assertEquals(Right(Cli.ThroughputArgs(2, 500, 1.5, 10000, payloadCopy = true, "fair")),
      Cli.parse(Seq("throughput", "--duration-s=1.5", "--message-bytes", "500", "--pairs", "2")))
    assertEquals(Right(Cli.PingPingArgs(67108864, 1000000000, payloadCopy = false, "fair")),
      Cli.parse(Seq("pingping", "--repetitions", "1000000000", "--payload", "share", "--message-bytes=67108864")))
    assertEquals(Right(Cli.SpawnArgs(200000000, "fair")), Cli.parse(Seq("spawn", "--processes", "200000000")))
  }

  /** The ranges written in Cli.scala are the ones in spec/cli.json, flag for flag. */
  @Test def cliTableMatchesSpec(): Unit = {
    assertEquals(benchmarks.map(_._1).toSet, Cli.benchmarks.keySet)
    for ((bench, flags) <- benchmarks) {
      val ours = Cli.benchmarks(bench).map(f => f.name -> f).toMap
      assertEquals(flags.map(_._1).toSet, ours.keySet, bench)
      for ((name, f) <- flags) {
        val o = ours(name)
        assertEquals(f.path("required").asBoolean(false), o.required, s"$bench $name required")
        assertEquals(Option(f.get("default")).map(_.asText), o.default, s"$bench $name default")
        (f.get("type").asText, o.tpe) match {
          case ("int", Cli.IntType(min, max)) =>
            assertEquals(f.get("min").asLong, min); assertEquals(f.get("max").asLong, max)
          case ("number", Cli.NumberType(minEx, max)) =>
            assertEquals(f.get("min_exclusive").asDouble, minEx, 0.0); assertEquals(f.get("max").asDouble, max, 0.0)
          case ("enum", Cli.EnumType(values)) =>
            assertEquals(f.get("values").elements().asScala.map(_.asText).toSeq, values)
          case (t, x) => fail(s"$bench $name: spec type $t, ours $x")
        }
      }
    }
    val m = cliJson.get("markers")
    assertEquals(m.get("pingping_a").asInt, Payload.PingA.toInt)
    assertEquals(m.get("pingping_b").asInt, Payload.PingB.toInt)
    assertEquals(m.get("throughput_server").asInt, Payload.Server.toInt)
    assertEquals(m.get("throughput_client").asInt, Payload.Client.toInt)
    assertEquals(cliJson.get("throughput_sample_min_interval_s").asDouble, Throughput.SampleMinIntervalS, 0.0)
    assertEquals("src/scala/target/serverbench.jar", cliJson.at("/languages/scala_akka/executable").asText)
  }
}
