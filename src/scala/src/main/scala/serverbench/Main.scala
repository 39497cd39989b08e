package serverbench

import java.io.{InputStream, PrintStream}

import scala.concurrent.Await
import scala.concurrent.duration._

import com.typesafe.config.{Config, ConfigFactory}

import Rt.ActorSystem

/** One program for every JVM actor runtime: the runtime is the build's (Rt, a shim per
  * runtime); the language is scala_akka for Akka 2.6, or the runtime point a language
  * entry's command names with -Dserverbench.language (scala_pekko_jdk25, ...). */
object Main {
  /** How long a caller of run that waits (tests) waits for the actor system to stop after the record is out. */
  val ShutdownGrace: FiniteDuration = 5.seconds
  val ProgramVersion = "0.1.0"
  /** The cli.json language this process runs as (JvmCheck refuses a JVM that does not match its entry). */
  val Language: String = System.getProperty("serverbench.language", Rt.DefaultLanguage)
  val ExitOk = 0
  val ExitRunFailed = 1
  val ExitUsage = 2

  def main(args: Array[String]): Unit = {
    val out = System.out
    // stdout carries only the record: anything else that writes to System.out (or to
    // Scala's Console, created from it on first use) lands on stderr instead.
    System.setOut(System.err)
    val code = run(args, out, System.err, awaitStop = false)
    out.flush()
    System.err.flush()
    // The record is out: nothing the process still does is measured or printed. Halting
    // skips the JVM's shutdown hooks (the runtime's CoordinatedShutdown among them), which would
    // wait for the actor system to stop every actor; for 100,000 idle spawn actors that is
    // ~1.8 s of each run's wall time (~40 s of a quick sweep) spent on nothing.
    Runtime.getRuntime.halt(code)
  }

  /** The process's streams, for a runner that talks before its record (a socket
    * server's listening line, its stop line on stdin). */
  final case class Io(in: InputStream, out: PrintStream, err: PrintStream)

  /** A benchmark's runner: the parsed command line in, its outcome out. */
  type Runner = (ActorSystem, Cli.Run, Io) => Outcome

  /** Runners by benchmark (or "benchmark role"), with the resolved knobs of the run;
    * every benchmark cli.json lists for the language needs one (CliTest checks). */
  type KnobbedRunner = (ActorSystem, Cli.Run, Io, Map[String, String]) => Outcome
  lazy val runners: Map[String, KnobbedRunner] = Map[String, KnobbedRunner](
    "pingping" -> ((s, r, _, k) => PingPing.run(s, Cli.PingPingArgs(r), k)),
    "spawn" -> ((s, r, _, k) => Spawn.run(s, Cli.SpawnArgs(r), k)),
    "throughput" -> ((s, r, _, k) => Throughput.run(s, Cli.ThroughputArgs(r), k))) ++
    Rt.runners.map { case (key, f) => key -> ((s: ActorSystem, r: Cli.Run, io: Io, _: Map[String, String]) => f(s, r, io)) }

  /** The paper variant's knobs of a run, resolved (Knobs); checked before anything runs. */
  def knobsOf(r: Cli.Run, language: String = Language): Map[String, String] =
    Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).fold(_ => Map.empty[String, String], m => m)

  def runnerKey(benchmark: String, role: Option[String]): String = (benchmark +: role.toSeq).mkString(" ")

  /** The command line as run will carry it out, or the usage error (the line run prints
    * after "error: ", exit 2): every refusal that comes before anything starts. */
  def command(args: Seq[String], language: String = Language): Either[String, Cli.Command] =
    Cli.parse(args, language) match {
      case Right(Cli.Run(bench, role, _, _)) if !runners.contains(runnerKey(bench, role)) =>
        Left(s"${runnerKey(bench, role)} is listed for $language in cli.json but not built into this program")
      case Right(r: Cli.Run) if Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).isLeft =>
        Left(Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).fold(m => m, _ => ""))
      case Right(r: Cli.Run) if Rt.usageError(r).isDefined => Left(Rt.usageError(r).get)
      case other => other
    }

  /** Everything but the process exit, so that tests can call it. language: the cli.json
    * language to run as (main: -Dserverbench.language; tests parse as each one in turn). */
  def run(args: Array[String], out: PrintStream, err: PrintStream, config: => Config = ConfigFactory.load(),
          in: InputStream = System.in, awaitStop: Boolean = true, language: String = Language): Int =
    (if (Rt.ChecksJvm) JvmCheck.problem(language) else None) match {
      case Some(msg) =>
        err.println(s"error: $msg")
        ExitUsage
      case None => runChecked(args, out, err, config, in, awaitStop, language)
    }

  /** run once the JVM is the language's (JvmCheck); tests call it for the JDK 25 languages. */
  def runChecked(args: Array[String], out: PrintStream, err: PrintStream, config: => Config,
                 in: InputStream, awaitStop: Boolean, language: String): Int =
    command(args.toSeq, language) match {
      case Left(msg) =>
        err.println(s"error: $msg")
        ExitUsage
      case Right(Cli.Help) =>
        out.println(Cli.usage(language))
        out.flush()
        ExitOk
      case Right(cmd) =>
        var system: ActorSystem = null
        val knobs = cmd match {
          case r: Cli.Run => knobsOf(r, language)
          case _ => Map.empty[String, String]
        }
        try {
          // Created before any clock starts (start-up is outside the timed region). The
          // dispatcher knob may replace the harness's sizing with the runtime's default (Knobs).
          system = ActorSystem("serverbench", Knobs.config(knobs, config))
          val (line, code) = cmd match {
            case r: Cli.Run =>
              val o = runners(runnerKey(r.benchmark, r.role))(system, r, Io(in, out, err), knobs)
              val fields = Seq[(String, Json.Value)](
                "benchmark" -> Json.Str(r.benchmark)) ++
                r.role.map(role => "role" -> (Json.Str(role): Json.Value)) ++ Seq[(String, Json.Value)](
                "language" -> Json.Str(language),
                "variant" -> Json.Str(r.variant.getOrElse("")),
                // knob flags given on the command line appear in params (resolved values: knobs)
                "params" -> Json.Obj(o.params.fields ++ Knobs.givenFlags(r.params, "send", "dispatcher", "timer", "props", "counting", "window", "exit"): _*),
                "metrics" -> o.metrics,
                "validation" -> o.validation,
                "runtime" -> RuntimeInfo.json(system)) ++
                // paper and mixed records only: the resolved knobs
                (if (r.variant.forall(_ == "fair") || knobs.isEmpty) Nil else Seq("knobs" -> Knobs.json(knobs)))
              (Json.Obj(fields: _*), if (o.ok) ExitOk else ExitRunFailed)
            case _ => // --version
              (Json.Obj(
                "program" -> Json.Str("serverbench"),
                "program_version" -> Json.Str(ProgramVersion),
                "language" -> Json.Str(language),
                "runtime" -> RuntimeInfo.json(system)), ExitOk)
          }
          out.println(Json.encode(line))
          out.flush()
          code
        } catch {
          case e: RunFailure => // e.g. the port is taken: one line, no record
            err.println(s"error: ${e.getMessage}")
            ExitRunFailed
          // A runtime failure (e.g. OutOfMemoryError while spawning): one line, no record.
          case e: Throwable =>
            err.println(s"error: ${e.getClass.getName}: ${e.getMessage}")
            ExitRunFailed
        } finally {
          if (system != null) {
            system.terminate()
            // main halts the process instead of waiting (see main). A caller that waits
            // (tests) gives up after a grace period: stopping millions of idle spawn actors
            // one by one takes the runtime many seconds (9 s for 1M here).
            if (awaitStop) try Await.result(system.whenTerminated, ShutdownGrace)
            catch {
              case _: java.util.concurrent.TimeoutException =>
                err.println(s"note: actor system still stopping after ${ShutdownGrace.toSeconds} s; exiting anyway")
            }
          }
        }
    }
}
