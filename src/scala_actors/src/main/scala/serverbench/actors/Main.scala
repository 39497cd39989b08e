package serverbench.actors

import java.util.Properties
import java.util.concurrent.{ArrayBlockingQueue, TimeUnit}

import serverbench.jvm.{Language, Launcher, PingPingResult, Sys}

/** The `scala_actors` language of spec/cli.json: pingping with scala.actors (Scala 2.11). */
final class ScalaActors extends Language {
  def name: String = ScalaActors.Name
  def runtimeName: String = "scala-actors"
  def runtimeVersion: String =
    s"Scala ${scala.util.Properties.versionNumberString} / scala-actors ${ScalaActors.actorsVersion} / ${Sys.jvm()}"

  /** The actors' scheduler's real parallelism: a task run on it finds itself on a worker
    * of the ForkJoinScheduler's pool and reports that pool's parallelism (which
    * -Dactors.corePoolSize sets). Should the scheduler not be a fork-join one
    * (-Dactors.enableForkJoin=false) it reports scala-actors' own core-pool formula. */
  def schedulers(): Int = {
    val q = new ArrayBlockingQueue[Integer](1)
    scala.actors.Scheduler.execute(new Runnable {
      def run(): Unit = q.put(Thread.currentThread match {
        case t: scala.concurrent.forkjoin.ForkJoinWorkerThread => t.getPool.getParallelism
        case _ => -1
      })
    })
    val p = q.poll(30, TimeUnit.SECONDS)
    if (p == null) throw new IllegalStateException("the actors' scheduler ran no task within 30 s")
    if (p >= 1) p else ScalaActors.configuredCorePoolSize
  }

  def pingping(messageBytes: Int, repetitions: Int, copy: Boolean): PingPingResult =
    ActorsPingPing.run(messageBytes, repetitions, copy)
}

object ScalaActors {
  val Name = "scala_actors"

  /** version.number of actors.properties in the scala-actors jar. */
  lazy val actorsVersion: String = {
    val in = classOf[scala.actors.Actor].getResourceAsStream("/actors.properties")
    if (in == null) "unknown"
    else try {
      val p = new Properties()
      p.load(in)
      p.getProperty("version.number", "unknown")
    } finally in.close()
  }

  /** scala.actors.scheduler.ThreadPoolConfig.corePoolSize (private there). */
  def configuredCorePoolSize: Int =
    Option(System.getProperty("actors.corePoolSize")).flatMap(s => scala.util.Try(s.toInt).toOption).filter(_ > 0)
      .getOrElse(math.max(4, Runtime.getRuntime.availableProcessors * 2))
}

object Main {
  def main(args: Array[String]): Unit = Launcher.main(args, new ScalaActors)
}
