package serverbench

/** The runtime shim of this build: Akka 2.6 on Scala 2.13 (language scala_akka, and the
  * socket benchmarks' scala). The shared sources (src/main/scala) name the actor runtime
  * only through Rt, so that src/scala_pekko and src/scala_akka24 compile the same sources
  * against Pekko and Akka 2.4.12 with their own Rt. */
object Rt {
  type Actor = akka.actor.Actor
  val Actor = akka.actor.Actor
  type ActorRef = akka.actor.ActorRef
  val ActorRef = akka.actor.ActorRef
  type ActorSystem = akka.actor.ActorSystem
  val ActorSystem = akka.actor.ActorSystem
  type Props = akka.actor.Props
  val Props = akka.actor.Props
  // the im server's (src/main/im): classic TCP, supervision and bytes, by the same names
  val IO = akka.io.IO
  val Tcp = akka.io.Tcp
  type ByteString = akka.util.ByteString
  val ByteString = akka.util.ByteString
  type Terminated = akka.actor.Terminated
  val Terminated = akka.actor.Terminated
  type SupervisorStrategy = akka.actor.SupervisorStrategy
  val SupervisorStrategy = akka.actor.SupervisorStrategy
  type OneForOneStrategy = akka.actor.OneForOneStrategy
  val OneForOneStrategy = akka.actor.OneForOneStrategy
  type ActorKilledException = akka.actor.ActorKilledException
  val Kill = akka.actor.Kill

  /** Java collections as Scala ones (Scala 2.13's converters). */
  object Converters extends scala.collection.convert.AsJavaExtensions with scala.collection.convert.AsScalaExtensions

  /** The record's runtime name, and the prefix of the runtime's own configuration keys. */
  val Name = "akka"
  val ConfigPrefix = "akka"
  /** The cli.json language a process runs as unless -Dserverbench.language says otherwise. */
  val DefaultLanguage = "scala_akka"
  /** The jar cli.json names for this build's languages. */
  val JarName = "serverbench.jar"
  /** Whether Main refuses a JVM that differs from the language's cli.json entry (JvmCheck):
    * the runtime points of one jar (Pekko, Akka 2.4.12) name their JDK; scala_akka runs on
    * whichever JVM the machine has. */
  val ChecksJvm = false
  /** The sockets language this jar also runs (serverbench.ScalaSocketsMain), if any. */
  val SocketsLanguage: Option[String] = Some(ScalaSocketsMain.Language)

  /** What the record's runtime.version says. */
  def version: String =
    s"Scala ${scala.util.Properties.versionNumberString} / Akka ${akka.Version.current} / JVM ${System.getProperty("java.version")}"

  /** The parallelism of a fork-join worker thread of a pool this Scala has its own copy of
    * (Scala 2.11 only), else None. */
  def ownForkJoinParallelism(t: Thread): Option[Int] = None

  /** The benchmarks only this build runs (cli.json lists them for scala_akka alone). */
  def runners: Map[String, Main.Runner] = Map(
    "echo_flood server" -> ((s, r, io) => EchoFlood.run(s, r, io)),
    "recovery" -> ((s, r, _) => Recovery.run(s, r)),
    "im server" -> ((s, r, io) => im.Im.run(s, r, io)))

  /** A usage error only this build's benchmarks have, found before anything runs. */
  def usageError(r: Cli.Run): Option[String] =
    if (r.benchmark == "recovery") Recovery.usageError(r.params.double("crashes_per_s"), r.params.double("duration_s"))
    else None
}
