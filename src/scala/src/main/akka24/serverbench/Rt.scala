package serverbench

/** The runtime shim of this build: Akka 2.4.12, the version the paper's programs used, on
  * Scala 2.11, compiling the shared sources of src/scala/src/main/scala (language
  * scala_akka24). The shared sources avoid what Scala 2.11 lacks (right-biased Either,
  * Regex.matches, SAM conversion of Java lambdas). */
object Rt {
  type Actor = akka.actor.Actor
  val Actor = akka.actor.Actor
  type ActorRef = akka.actor.ActorRef
  val ActorRef = akka.actor.ActorRef
  type ActorSystem = akka.actor.ActorSystem
  val ActorSystem = akka.actor.ActorSystem
  type Props = akka.actor.Props
  val Props = akka.actor.Props

  /** Java collections as Scala ones (Scala 2.11's converters). */
  object Converters extends scala.collection.convert.DecorateAsJava with scala.collection.convert.DecorateAsScala

  val Name = "akka"
  val ConfigPrefix = "akka"
  val DefaultLanguage = "scala_akka24"
  val JarName = "serverbench-akka24.jar"
  /** A runtime point: its language entry names its JDK (JvmCheck). */
  val ChecksJvm = true
  val SocketsLanguage: Option[String] = None

  def version: String =
    s"Scala ${scala.util.Properties.versionNumberString} / Akka ${akka.Version.current} / " +
      s"JVM ${System.getProperty("java.version")} (${JvmCheck.headers})"

  /** Akka 2.4 on Scala 2.11 runs its dispatcher on Scala 2.11's own copy of jsr166. */
  def ownForkJoinParallelism(t: Thread): Option[Int] = t match {
    case w: scala.concurrent.forkjoin.ForkJoinWorkerThread => Some(w.getPool.getParallelism)
    case _ => None
  }

  /** Only the paper's three benchmarks (cli.json). */
  def runners: Map[String, Main.Runner] = Map.empty
  def usageError(r: Cli.Run): Option[String] = None
}
