package serverbench

import java.io.InputStream

/** The shared tests' runtime-specific expectations for this build (Akka 2.6). */
object TestRt {
  /** What the record's runtime.version must contain. */
  val VersionMarker = "Akka 2.6.21"

  /** A main of this build other than Main, for the language it runs as (cli.json). */
  def otherEntry(language: String, in: => InputStream): Option[ParserCasesTest.Entry] =
    if (language == ScalaSocketsMain.Language)
      Some(ParserCasesTest.Entry(ScalaSocketsMain.command, (a, o, e) => ScalaSocketsMain.run(a, o, e, in)))
    else None
}
