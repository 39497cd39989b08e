package serverbench.akka24

import java.util.concurrent.ForkJoinWorkerThread

import scala.concurrent.{Await, Future}
import scala.concurrent.duration._

import akka.actor.ActorSystem
import com.typesafe.config.Config

/** What the record's `runtime` says: taken from the running system, not from our flags. */
object RuntimeInfo {
  val Name = "akka"

  /** Which runtime ran (the runtimes profile compares JDKs): Scala, Akka, the JVM and its object-header layout. */
  def version: String =
    s"Scala ${scala.util.Properties.versionNumberString} / Akka ${akka.Version.current} / " +
      s"JVM ${System.getProperty("java.version")} (${JvmCheck.headers})"

  /** The default dispatcher's real parallelism: a task run on it finds itself on a
    * ForkJoinWorkerThread whose pool is the dispatcher's ForkJoinPool. If the dispatcher
    * is not a fork-join pool (someone configured otherwise) fall back to the formula. */
  def schedulers(system: ActorSystem): Int = {
    val f = Future {
      Thread.currentThread() match {
        case t: ForkJoinWorkerThread => t.getPool.getParallelism
        // Akka 2.4 on Scala 2.11 runs its dispatcher on Scala 2.11's own copy of jsr166
        case t: scala.concurrent.forkjoin.ForkJoinWorkerThread => t.getPool.getParallelism
        case _ => -1
      }
    }(system.dispatcher)
    val p = Await.result(f, 30.seconds)
    if (p >= 1) p else configuredParallelism(system.settings.config)
  }

  /** Akka's own rule (ThreadPoolConfig.scaledPoolSize): ceil(cpus * factor) clamped to [min, max]. */
  def configuredParallelism(config: Config): Int = {
    val c = config.getConfig("akka.actor.default-dispatcher.fork-join-executor")
    val cpus = Runtime.getRuntime.availableProcessors
    val scaled = math.ceil(cpus * c.getDouble("parallelism-factor")).toInt
    math.min(math.max(scaled, c.getInt("parallelism-min")), c.getInt("parallelism-max"))
  }

  def json(system: ActorSystem): Json.Obj = Json.Obj(
    "name" -> Json.Str(Name),
    "version" -> Json.Str(version),
    "schedulers" -> Json.int(schedulers(system)),
    "max_heap_bytes" -> Json.optInt(Sys.maxHeapBytes()))
}
