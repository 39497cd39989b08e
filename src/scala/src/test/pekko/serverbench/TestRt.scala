package serverbench

import java.io.InputStream

/** The shared tests' runtime-specific expectations for this build. */
object TestRt {
  /** What the record's runtime.version must contain. */
  val VersionMarker = "Pekko 1.7.0"

  /** This build has no main but Main. */
  def otherEntry(language: String, in: => InputStream): Option[ParserCasesTest.Entry] = None
}
