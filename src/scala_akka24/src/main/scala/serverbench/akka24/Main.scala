package serverbench.akka24

import java.io.PrintStream

import scala.concurrent.Await
import scala.concurrent.duration._

import akka.actor.ActorSystem
import com.typesafe.config.{Config, ConfigFactory}

object Main {
  /** How long the process waits for the actor system to stop after the record is out. */
  val ShutdownGrace: FiniteDuration = 5.seconds
  val ProgramVersion = "0.1.0"
  /** The cli.json language (JvmCheck refuses a JVM that does not match its entry). */
  val Language: String = System.getProperty("serverbench.language", "scala_akka24")
  val ExitOk = 0
  val ExitRunFailed = 1
  val ExitUsage = 2

  def main(args: Array[String]): Unit = {
    val out = System.out
    // stdout carries only the record: anything else that writes to System.out (or to
    // Scala's Console, created from it on first use) lands on stderr instead.
    System.setOut(System.err)
    val code = run(args, out, System.err)
    out.flush()
    sys.exit(code) // only now: the record is out and the ActorSystem has terminated
  }

  /** A benchmark's runner: the parsed command line and its resolved knobs in, its outcome out. */
  type Runner = (ActorSystem, Cli.Run, Map[String, String]) => Outcome

  /** Runners by benchmark (or "benchmark role"); every benchmark cli.json lists for
    * scala_akka24 needs one (CliTest checks). */
  val runners: Map[String, Runner] = Map(
    "pingping" -> ((s, r, k) => PingPing.run(s, Cli.PingPingArgs(r), k)),
    "spawn" -> ((s, r, k) => Spawn.run(s, Cli.SpawnArgs(r), k)),
    "throughput" -> ((s, r, k) => Throughput.run(s, Cli.ThroughputArgs(r), k)))

  /** The paper variant's knobs of a run, resolved (Knobs); checked before anything runs. */
  def knobsOf(r: Cli.Run, language: String = Language): Map[String, String] =
    Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).right.getOrElse(Map.empty)

  def runnerKey(benchmark: String, role: Option[String]): String = (benchmark +: role.toSeq).mkString(" ")

  /** Everything but the process exit, so that tests can call it. language: the cli.json
    * language to run as (main: -Dserverbench.language; tests parse as each one in turn). */
  def run(args: Array[String], out: PrintStream, err: PrintStream, config: => Config = ConfigFactory.load(),
          language: String = Language): Int =
    JvmCheck.problem(language) match {
      case Some(msg) =>
        err.println(s"error: $msg")
        ExitUsage
      case None => runChecked(args, out, err, config, language)
    }

  /** The command line as run will carry it out, or the usage error (the line run prints
    * after "error: ", exit 2): every refusal that comes after JvmCheck and before anything starts. */
  def command(args: Seq[String], language: String = Language): Either[String, Cli.Command] =
    Cli.parse(args, language) match {
      case Right(Cli.Run(bench, role, _, _)) if !runners.contains(runnerKey(bench, role)) =>
        Left(s"${runnerKey(bench, role)} is listed for $language in cli.json but not built into this program")
      case Right(r: Cli.Run) if Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).isLeft =>
        Left(Knobs.resolve(r.benchmark, r.variant.getOrElse("fair"), r.params, language).left.getOrElse(""))
      case other => other
    }

  /** run once the JVM is the language's (JvmCheck); tests call it for the JDK 25 languages. */
  private[akka24] def runChecked(args: Array[String], out: PrintStream, err: PrintStream, config: => Config,
                                language: String): Int =
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
          // dispatcher knob may replace the harness's sizing with Akka's default (Knobs).
          system = ActorSystem("serverbench", Knobs.config(knobs, config))
          val (line, code) = cmd match {
            case r: Cli.Run =>
              val o = runners(runnerKey(r.benchmark, r.role))(system, r, knobs)
              val fields = Seq[(String, Json.Value)](
                "benchmark" -> Json.Str(r.benchmark)) ++
                r.role.map(role => "role" -> (Json.Str(role): Json.Value)) ++ Seq[(String, Json.Value)](
                "language" -> Json.Str(language),
                "variant" -> Json.Str(r.variant.getOrElse("")),
                // knob flags given on the command line appear in params (resolved values: knobs)
                "params" -> Json.Obj(o.params.fields ++ Knobs.givenFlags(r.params, "send", "dispatcher", "timer", "counting", "window", "exit"): _*),
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
          // A runtime failure (e.g. OutOfMemoryError while spawning): one line, no record.
          case e: Throwable =>
            err.println(s"error: ${e.getClass.getName}: ${e.getMessage}")
            ExitRunFailed
        } finally {
          if (system != null) {
            system.terminate()
            // Stopping millions of idle spawn actors one by one takes Akka many seconds
            // (9 s for 1M here) after the record is out; none of them prints, so after a
            // grace period the process exits with the stop still under way rather than
            // spend the harness's timeout on it.
            try Await.result(system.whenTerminated, ShutdownGrace)
            catch {
              case _: java.util.concurrent.TimeoutException =>
                err.println(s"note: actor system still stopping after ${ShutdownGrace.toSeconds} s; exiting anyway")
            }
          }
        }
    }
}
