package serverbench

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, PrintStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest

import Rt.Converters._

import com.fasterxml.jackson.databind.JsonNode
import com.typesafe.config.ConfigFactory
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import TestSupport._
import ParserCasesTest.Entry

/** tests/conformance/parser-cases.json (generated from spec/cli.json), in process, for
  * every language cli.json builds from this folder: each usage case through the run its
  * main calls, with captured stdout and stderr; each valid case through the parser only
  * (the command run would act on). No process, socket or benchmark is started: run is
  * called only once the command line is known to be refused. */
class ParserCasesTest {
  private val CasesFile = "tests/conformance/parser-cases.json"
  private val RelTol = 1e-9

  /** The repository root: the parent of the spec directory the other tests read. */
  private val root: Path = specDir.getParent

  /** The case file, once it is known to come from the current spec/cli.json. */
  private lazy val doc: JsonNode = {
    val d = mapper.readTree(root.resolve(CasesFile).toFile)
    val sha = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(specDir.resolve("cli.json")))
      .map(b => "%02x".format(b & 0xff)).mkString
    assertEquals(sha, d.path("cli_json_sha256").asText,
      s"$CasesFile was generated from another spec/cli.json: run python3 tests/python/conformance/cases.py")
    d
  }

  /** The cli.json languages whose executable this folder builds (mvn test runs here). */
  private lazy val languages: Seq[String] = {
    val here = root.toRealPath().relativize(Paths.get("").toRealPath()).toString.replace('\\', '/') + "/"
    val ls = fields(cliJson.get("languages"))
      .collect { case (l, e) if e.path("executable").asText.startsWith(here) => l }.toVector
    assertTrue(ls.contains(Main.Language), s"cli.json builds no language from $here (found: $ls)")
    ls
  }

  private def noInput = new ByteArrayInputStream(Array.emptyByteArray)

  /** The main each language's command names (cli.json): Main as the language (the real
    * command sets it with -Dserverbench.language), or another main of this build (TestRt:
    * ScalaSocketsMain for scala). JvmCheck refuses the JDK 25 languages on the JDK 17 test
    * JVM (JvmCheckTest): their cases go through what run does once the check has passed. */
  private def entry(language: String): Entry = TestRt.otherEntry(language, noInput).getOrElse(
    Entry(a => Main.command(a, language),
      if (!Rt.ChecksJvm || JvmCheck.problem(language).isEmpty) (a, o, e) => Main.run(a, o, e, in = noInput, language = language)
      else (a, o, e) => Main.runChecked(a, o, e, ConfigFactory.load(), noInput, true, language)))

  private def cases(language: String, kind: String): Vector[JsonNode] = {
    val l = doc.path("languages").path(language).path(kind)
    assertTrue(l.isArray, s"$CasesFile has no languages.$language.$kind list")
    l.elements().asScala.toVector
  }

  private def args(c: JsonNode): Vector[String] = c.path("args").elements().asScala.map(_.asText).toVector

  private def quote(s: String): String = mapper.writeValueAsString(s)
  private def quote(a: Seq[String]): String = mapper.writeValueAsString(a.asJava)

  /** What is wrong with one usage case's run, if anything. */
  private def usageProblems(e: Entry, a: Seq[String], mentions: Seq[String], usageExit: Int): Seq[String] =
    e.command(a) match {
      // Accepted: run would start the benchmark, so it is not called.
      case Right(c) => Seq(s"accepted as $c")
      case Left(_) =>
        val o = new ByteArrayOutputStream()
        val er = new ByteArrayOutputStream()
        val code = e.run(a.toArray, new PrintStream(o, true, "UTF-8"), new PrintStream(er, true, "UTF-8"))
        val out = new String(o.toByteArray, UTF_8)
        val err = new String(er.toByteArray, UTF_8)
        val lines = err.split("\\r?\\n|\\r").toVector.filter(_.trim.nonEmpty)
        val line = lines.headOption.getOrElse("")
        (if (code != usageExit) Seq(s"exit $code (expected $usageExit)") else Nil) ++
          (if (out.nonEmpty) Seq(s"stdout ${quote(out)}") else Nil) ++
          (if (lines.size != 1) Seq(s"${lines.size} non-blank stderr lines ${quote(err)}")
           else (if (!line.startsWith("error: ")) Seq(s"stderr line ${quote(line)} does not start with 'error: '") else Nil) ++
             mentions.filterNot(line.contains(_)).map(m => s"stderr line ${quote(line)} does not mention ${quote(m)}"))
    }

  /** Params of the benchmark's knob flags: cli.json's knobs are not record params. */
  private def knobParams(benchmark: String): Set[String] =
    fields(cliJson.path("benchmarks").path(benchmark).path("flags"))
      .collect { case (_, f) if f.has("knob") => f.path("param").asText }.toSet

  /** Numbers numerically (ints exactly, a float on either side within RelTol), text as text. */
  private def same(want: JsonNode, got: Any): Boolean = got match {
    case l: Long if want.isIntegralNumber => want.canConvertToLong && want.asLong == l
    case d: Double if want.isNumber => math.abs(d - want.asDouble) <= RelTol * math.max(math.abs(d), math.abs(want.asDouble))
    case l: Long if want.isNumber => math.abs(l - want.asDouble) <= RelTol * math.max(math.abs(l.toDouble), math.abs(want.asDouble))
    case s: String => want.isTextual && want.asText == s
    case _ => false
  }

  /** What is wrong with one valid case's parse, if anything. */
  private def validProblems(e: Entry, c: JsonNode): Seq[String] = e.command(args(c)) match {
    case Left(msg) => Seq(s"refused: error: $msg")
    case Right(r: Cli.Run) =>
      val bench = c.path("benchmark").asText
      val variant = if (c.path("variant").isNull) None else Some(c.path("variant").asText)
      val want = fields(c.path("params")).toMap
      val got = r.params.values.filter { case (p, _) => !knobParams(r.benchmark).contains(p) }
      (if (r.benchmark != bench) Seq(s"benchmark ${r.benchmark} (expected $bench)") else Nil) ++
        (if (r.variant != variant) Seq(s"variant ${r.variant} (expected $variant)") else Nil) ++
        (if (variant.forall(_ == "fair"))
          want.toSeq.sortBy(_._1).collect {
            case (p, w) if !got.contains(p) => s"params.$p missing (expected $w)"
            case (p, w) if !same(w, got(p)) => s"params.$p = ${got(p)} (expected $w)"
          } ++ got.keys.toSeq.sorted.filterNot(want.contains).map(p => s"params.$p = ${got(p)} not expected")
        else Nil)
    case Right(other) => Seq(s"parsed as $other, not a run")
  }

  /** One failure naming every failing case, or nothing. */
  private def report(kind: String, checked: Seq[(String, Int)], failures: Seq[String]): Unit = {
    val counts = checked.map { case (l, n) => s"$l $n" }.mkString(", ")
    if (failures.nonEmpty)
      fail(s"${failures.size} of ${checked.map(_._2).sum} $kind cases failed ($counts):\n" + failures.mkString("\n"))
  }

  @Test def casesComeFromTheCurrentSpec(): Unit = assertNotNull(doc)

  @Test def usageCasesExitWithOneErrorLine(): Unit = {
    val usageExit = doc.path("exit_codes").path("usage").asInt(-1)
    val results = languages.map { l =>
      val e = entry(l)
      val cs = cases(l, "usage")
      l -> (cs.size, cs.flatMap { c =>
        val a = args(c)
        val problems = usageProblems(e, a, c.path("mentions").elements().asScala.map(_.asText).toVector, usageExit)
        if (problems.isEmpty) None else Some(s"$l ${quote(a)}: ${problems.mkString("; ")}")
      })
    }
    report("usage", results.map { case (l, (n, _)) => l -> n }, results.flatMap(_._2._2))
  }

  @Test def validCasesParseToTheirParams(): Unit = {
    val results = languages.map { l =>
      val e = entry(l)
      val cs = cases(l, "valid")
      l -> (cs.size, cs.flatMap { c =>
        val problems = validProblems(e, c)
        if (problems.isEmpty) None else Some(s"$l ${quote(args(c))}: ${problems.mkString("; ")}")
      })
    }
    report("valid", results.map { case (l, (n, _)) => l -> n }, results.flatMap(_._2._2))
  }
}

object ParserCasesTest {
  /** How the program parses (command: what run acts on) and runs as one language. */
  final case class Entry(command: Seq[String] => Either[String, Cli.Command],
                         run: (Array[String], PrintStream, PrintStream) => Int)
}
