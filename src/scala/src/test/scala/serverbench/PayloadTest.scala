package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class PayloadTest {
  @Test def buildLayout(): Unit = {
    val b = Payload.build(600, Payload.PingA)
    assertEquals(600, b.length)
    assertEquals(65, b(0).toInt)
    for (i <- 1 until 600) assertEquals((i % 256).toByte, b(i))
    assertTrue(Payload.check(b, 600, Payload.PingA))
  }

  @Test def checkDetectsCorruption(): Unit = {
    val b = Payload.build(300, Payload.Server)
    assertFalse(Payload.check(b, 300, Payload.Client), "wrong marker")
    assertFalse(Payload.check(b, 301, Payload.Server), "wrong length")
    assertFalse(Payload.check(java.util.Arrays.copyOf(b, 299), 300, Payload.Server), "short buffer")
    val last = b.clone(); last(299) = (last(299) + 1).toByte
    assertFalse(Payload.check(last, 300, Payload.Server), "last byte")
    assertFalse(Payload.check(null, 300, Payload.Server))
    val one = Payload.build(1, Payload.PingB)
    assertTrue(Payload.check(one, 1, Payload.PingB))
    assertFalse(Payload.check(one, 1, Payload.PingA))
  }

  @Test def copyIsFreshAndStamped(): Unit = {
    val b = Payload.build(100, Payload.PingA)
    val c = Payload.copy(b, Payload.PingB)
    assertNotSame(b, c)
    assertEquals(65, b(0).toInt, "the received buffer is never written")
    assertEquals(66, c(0).toInt)
    assertTrue(Payload.check(c, 100, Payload.PingB))
    assertArrayEquals(b.drop(1), c.drop(1))
  }

  /** A benchmark counts a corrupted message and fails validation (exit 1, record printed). */
  @Test def corruptedRunFailsValidation(): Unit = {
    val a = new java.util.concurrent.atomic.AtomicLongArray(4)
    val done = new java.util.concurrent.CountDownLatch(1)
    val system = akka.actor.ActorSystem("payload-test")
    try {
      val side = system.actorOf(akka.actor.Props(new PingPing.Side(Payload.PingA, Payload.PingB, 10, 2, true, a, 0, done)))
      val sink = system.actorOf(akka.actor.Props(new akka.actor.Actor { def receive = { case _ => } }))
      side ! PingPing.Peer(sink)
      side ! PingPing.Data(Payload.build(10, Payload.PingA)) // wrong marker
      side ! PingPing.Data(Payload.build(10, Payload.PingB)) // good
      done.await()
      assertEquals(2L, a.get(0))
      assertEquals(1L, a.get(1))
    } finally system.terminate()
  }
}
