package serverbench

import java.io.InputStream

/** The shared tests' runtime-specific expectations for this build. */
object TestRt {
  /** What the record's runtime.version must contain. */
  val VersionMarker = "Akka 2.4.12"

  /** This build has no main but Main. */
  def otherEntry(language: String, in: => InputStream): Option[ParserCasesTest.Entry] = None
}
