package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** recovery's seeded schedule: the draws every language makes (Go and Erlang test the same). */
class RecoveryTest {
  @Test def splitmix64ReferenceDraws(): Unit = {
    val (a, s1) = Recovery.splitmix64(0L)
    val (b, s2) = Recovery.splitmix64(s1)
    val (c, _) = Recovery.splitmix64(s2)
    assertEquals(0xE220A8397B1DCDAFL, a)
    assertEquals(0x6E789E6AA1B965F4L, b)
    assertEquals(0x06C45D188009454FL, c)
  }

  @Test def oneCrashPerIntervalAtTheRate(): Unit = {
    val s = Recovery.schedule(7L, 100.0, 1.0, 4)
    assertEquals(100, s.size)
    for (((at, pair), k) <- s.zipWithIndex) {
      assertTrue(at >= k / 100.0 && at < (k + 1) / 100.0, s"crash $k at $at")
      assertTrue(pair >= 0 && pair < 4)
    }
    assertTrue(Recovery.schedule(7L, 0.0, 1.0, 4).isEmpty)
  }

  @Test def tooFewExpectedCrashesIsAUsageError(): Unit = {
    assertTrue(Recovery.usageError(1.5, 0.5).exists(_.contains("--crashes-per-s")))
    assertTrue(Recovery.usageError(0.0, 0.5).isEmpty && Recovery.usageError(2.0, 0.5).isEmpty)
  }
}
