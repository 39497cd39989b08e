package serverbench

import java.util.concurrent.ForkJoinWorkerThread

import scala.concurrent.{Await, Future}
import scala.concurrent.duration._

import Rt.ActorSystem
import Rt.Converters._
import com.typesafe.config.Config

/** What the record's `runtime` says: taken from the running system, not from our flags. */
object RuntimeInfo {
  val Name: String = Rt.Name

  /** Which runtime ran: Scala, the actor runtime and the JVM (the runtime points of one jar
    * add its object-header layout: Rt.version). */
  def version: String = Rt.version

  /** The default dispatcher's real parallelism: a task run on it finds itself on a
    * ForkJoinWorkerThread whose pool is the dispatcher's ForkJoinPool. If the dispatcher
    * is not a fork-join pool (someone configured otherwise) fall back to the formula. */
  def schedulers(system: ActorSystem): Int = {
    val f = Future {
      Thread.currentThread() match {
        case t: ForkJoinWorkerThread => t.getPool.getParallelism
        case t => Rt.ownForkJoinParallelism(t).getOrElse(-1)
      }
    }(system.dispatcher)
    val p = Await.result(f, 30.seconds)
    if (p >= 1) p else configuredParallelism(system.settings.config)
  }

  /** The runtime's own rule (ThreadPoolConfig.scaledPoolSize): ceil(cpus * factor) clamped to [min, max]. */
  def configuredParallelism(config: Config): Int = {
    val c = config.getConfig(s"${Rt.ConfigPrefix}.actor.default-dispatcher.fork-join-executor")
    val cpus = Runtime.getRuntime.availableProcessors
    val scaled = math.ceil(cpus * c.getDouble("parallelism-factor")).toInt
    math.min(math.max(scaled, c.getInt("parallelism-min")), c.getInt("parallelism-max"))
  }

  /** "fixed" when the JVM was given an initial heap (-Xms), else "grow": read from the JVM's
    * own input arguments, so the record says what ran, not what was asked for. */
  def heap: String = {
    val args = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
    if (args.asScala.exists(_.startsWith("-Xms"))) "fixed" else "grow"
  }

  def json(system: ActorSystem): Json.Obj = Json.Obj(
    "name" -> Json.Str(Name),
    "version" -> Json.Str(version),
    "schedulers" -> Json.int(schedulers(system)),
    "heap" -> Json.Str(heap),
    "max_heap_bytes" -> Json.optInt(Sys.maxHeapBytes()))
}
