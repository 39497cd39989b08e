package serverbench

import java.lang.management.ManagementFactory

import com.sun.management.HotSpotDiagnosticMXBean
import com.typesafe.config.{ConfigFactory, ConfigObject, ConfigParseOptions, ConfigSyntax}

import Rt.Converters._

/** One jar, several cli.json languages (the runtime points the runtimes profile compares):
  * the entry names the JDK it runs on ("jdk") and the JVM options it is measured with (in its command). A JVM
  * that is not what the entry says would put a wrong runtime into the record, so Main
  * refuses it with one usage line naming both (exit 2) before anything runs (Rt.ChecksJvm). */
object JvmCheck {
  private val json = ConfigParseOptions.defaults.setSyntax(ConfigSyntax.JSON).setAllowMissing(false)
  val CompactHeadersOption = "-XX:+UseCompactObjectHeaders"

  /** The running JVM's feature release (17, 25, ...). */
  def feature: Int = Runtime.version().feature()

  /** Whether this JVM lays out objects with compact (8-byte) headers: the HotSpot flag
    * itself, read back (JDK 24+); absent before JDK 24, hence false. */
  def compactHeaders: Boolean =
    try ManagementFactory.getPlatformMXBean(classOf[HotSpotDiagnosticMXBean])
      .getVMOption("UseCompactObjectHeaders").getValue == "true"
    catch { case _: IllegalArgumentException => false }

  def headers: String = if (compactHeaders) "compact object headers" else "standard object headers"

  /** Why this JVM cannot run as `language`, or None. */
  def problem(language: String): Option[String] = {
    val langs = ConfigFactory.parseResources(Cli.Spec.Resource, json).root.get("languages").asInstanceOf[ConfigObject]
    Option(langs.get(language)).collect { case o: ConfigObject => o } match {
      case None => Some(s"-Dserverbench.language=$language is not a language of cli.json")
      case Some(entry) =>
        val exe = Option(entry.get("executable")).map(_.unwrapped.toString).getOrElse("")
        val jdk = Option(entry.get("jdk")).map(_.unwrapped.toString.toInt).getOrElse(17)
        val command = Option(entry.get("command")).map(_.unwrapped.asInstanceOf[java.util.List[_]].asScala.map(_.toString))
          .getOrElse(Nil)
        val wantCompact = command.contains(CompactHeadersOption)
        if (!exe.endsWith(Rt.JarName)) Some(s"$language is not a language of this program (cli.json: $exe)")
        else if (feature != jdk) Some(s"$language runs on JDK $jdk, but this JVM is JDK ${System.getProperty("java.version")}")
        else if (wantCompact != compactHeaders)
          Some(s"$language is measured ${if (wantCompact) "with" else "without"} $CompactHeadersOption, " +
            s"but this JDK ${System.getProperty("java.version")} runs ${if (compactHeaders) "with" else "without"} it")
        else None
    }
  }
}
