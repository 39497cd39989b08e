package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** The JVM must be the one the language entry names (JDK 17). */
class JvmCheckTest {
  @Test def theTestJvmIsTheEntrysJdk(): Unit = {
    assertEquals(17, JvmCheck.feature, "mvn test runs on JDK 17, scala_akka24's")
    assertEquals(None, JvmCheck.problem("scala_akka24"))
  }

  @Test def otherLanguagesAreRefused(): Unit = {
    assertTrue(JvmCheck.problem("scala_pekko").exists(_.contains("not a language of this program")))
    assertTrue(JvmCheck.problem("cobol").exists(_.contains("not a language of cli.json")))
  }

  @Test def theRecordNamesTheRuntime(): Unit = {
    val v = RuntimeInfo.version
    assertTrue(v.matches("Scala 2\\.11\\.12 / Akka 2\\.4\\.12 / JVM 17\\.\\S+ \\(standard object headers\\)"), v)
  }
}
