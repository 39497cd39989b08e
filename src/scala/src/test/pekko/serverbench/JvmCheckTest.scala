package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** One jar, several runtime points: the JVM must be the one the language entry names. */
class JvmCheckTest {
  private val version = System.getProperty("java.version")

  @Test def theTestJvmIsScalaPekkosJdk(): Unit = {
    assertEquals(17, JvmCheck.feature, "mvn test runs on JDK 17, scala_pekko's")
    assertEquals(None, JvmCheck.problem("scala_pekko"))
    assertFalse(JvmCheck.compactHeaders)
  }

  @Test def aJdk25LanguageOnJdk17NamesBoth(): Unit = {
    assertEquals(Some(s"scala_pekko_jdk25 runs on JDK 25, but this JVM is JDK $version"),
      JvmCheck.problem("scala_pekko_jdk25"))
    assertEquals(Some(s"scala_pekko_jdk25_compact runs on JDK 25, but this JVM is JDK $version"),
      JvmCheck.problem("scala_pekko_jdk25_compact"))
  }

  @Test def otherLanguagesAreRefused(): Unit = {
    assertTrue(JvmCheck.problem("scala_akka").exists(_.contains("not a language of this program")))
    assertTrue(JvmCheck.problem("cobol").exists(_.contains("not a language of cli.json")))
  }

  @Test def theRecordNamesTheRuntime(): Unit = {
    val v = RuntimeInfo.version
    assertTrue(v.matches("Scala 2\\.13\\.\\d+ / Pekko 1\\.\\d+\\.\\d+ / JVM 17\\.\\S+ \\(standard object headers\\)"), v)
  }
}
