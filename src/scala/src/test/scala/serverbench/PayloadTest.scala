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

  @Test def copyMovesBytesIntoOwnBuffersInTurn(): Unit = {
    val o = new Owned(100, Payload.PingB, 2, true)
    val first = o.first()
    val in = Payload.build(100, Payload.PingA)
    in(50) = 0xEE.toByte // a byte only the received message has
    val a = o.reply(in); val b = o.reply(in); val c = o.reply(in)
    assertSame(o.bufs(0), first)
    assertSame(o.bufs(1), a, "after the first message the own buffers are used in turn")
    assertSame(o.bufs(0), b)
    assertSame(o.bufs(1), c)
    assertNotSame(in, a)
    assertEquals(65, in(0).toInt, "the received buffer is never written")
    assertEquals(66, a(0).toInt)
    assertEquals(0xEE.toByte, a(50), "the bytes really moved")
    assertTrue(Payload.check(a, 100, Payload.PingB))
    val s = new Owned(100, Payload.PingB, 1, false)
    assertSame(s.bufs(0), s.reply(in), "share always sends its own buffer")
    assertEquals(50.toByte, s.bufs(0)(50), "and never writes it")
  }

  /** A benchmark counts a corrupted message and fails validation (exit 1, record printed). */
  @Test def corruptedRunFailsValidation(): Unit = {
    val a = new java.util.concurrent.atomic.AtomicLongArray(4)
    val done = new java.util.concurrent.CountDownLatch(1)
    val system = Rt.ActorSystem("payload-test")
    try {
      val side = system.actorOf(Rt.Props(new PingPing.Side(Payload.PingA, Payload.PingB, 10, 2, true, a, 0, done)))
      val sink = system.actorOf(Rt.Props(new Rt.Actor { def receive = { case _ => } }))
      side ! PingPing.Peer(sink)
      side ! PingPing.Data(Payload.build(10, Payload.PingA)) // wrong marker
      side ! PingPing.Data(Payload.build(10, Payload.PingB)) // good
      done.await()
      assertEquals(2L, a.get(0))
      assertEquals(1L, a.get(1))
    } finally system.terminate()
  }
}
