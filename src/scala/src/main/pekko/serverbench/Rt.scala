package serverbench

/** The runtime shim of this build: Apache Pekko 1.x on Scala 2.13, compiling the shared
  * sources of src/scala/src/main/scala (languages scala_pekko, scala_pekko_jdk25,
  * scala_pekko_jdk25_compact: one jar, runtime points on different JDKs). */
object Rt {
  type Actor = org.apache.pekko.actor.Actor
  val Actor = org.apache.pekko.actor.Actor
  type ActorRef = org.apache.pekko.actor.ActorRef
  val ActorRef = org.apache.pekko.actor.ActorRef
  type ActorSystem = org.apache.pekko.actor.ActorSystem
  val ActorSystem = org.apache.pekko.actor.ActorSystem
  type Props = org.apache.pekko.actor.Props
  val Props = org.apache.pekko.actor.Props
  // the im server's (src/main/im): classic TCP, supervision and bytes, by the same names
  val IO = org.apache.pekko.io.IO
  val Tcp = org.apache.pekko.io.Tcp
  type ByteString = org.apache.pekko.util.ByteString
  val ByteString = org.apache.pekko.util.ByteString
  type Terminated = org.apache.pekko.actor.Terminated
  val Terminated = org.apache.pekko.actor.Terminated
  type SupervisorStrategy = org.apache.pekko.actor.SupervisorStrategy
  val SupervisorStrategy = org.apache.pekko.actor.SupervisorStrategy
  type OneForOneStrategy = org.apache.pekko.actor.OneForOneStrategy
  val OneForOneStrategy = org.apache.pekko.actor.OneForOneStrategy
  type ActorKilledException = org.apache.pekko.actor.ActorKilledException
  val Kill = org.apache.pekko.actor.Kill

  /** Java collections as Scala ones (Scala 2.13's converters). */
  object Converters extends scala.collection.convert.AsJavaExtensions with scala.collection.convert.AsScalaExtensions

  val Name = "pekko"
  val ConfigPrefix = "pekko"
  val DefaultLanguage = "scala_pekko"
  val JarName = "serverbench-pekko.jar"
  /** One jar, several runtime points: each language entry names its JDK (JvmCheck). */
  val ChecksJvm = true
  val SocketsLanguage: Option[String] = None

  /** The runtime points compare JDKs, so the version names the object-header layout too. */
  def version: String =
    s"Scala ${scala.util.Properties.versionNumberString} / Pekko ${org.apache.pekko.Version.current} / " +
      s"JVM ${System.getProperty("java.version")} (${JvmCheck.headers})"

  def ownForkJoinParallelism(t: Thread): Option[Int] = None

  /** The paper's three benchmarks and the im server (cli.json). */
  def runners: Map[String, Main.Runner] = Map("im server" -> ((s, r, io) => im.Im.run(s, r, io)))
  def usageError(r: Cli.Run): Option[String] = None
}
