package serverbench.actors

import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.actors.Actor
import scala.actors.Actor._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import serverbench.jvm.Payload

class ActorsPingPingTest {
  /** A side counts a corrupted message and still answers it; main would report ok false. */
  @Test def corruptedMessageIsCounted(): Unit = {
    val done = new CountDownLatch(1)
    val side = new ActorsPingPing.Side(Payload.PING_A, Payload.PING_B, 10, 2, true, done)
    val got = new java.util.concurrent.LinkedBlockingQueue[Array[Byte]]()
    val sink = actor { loop { react { case ActorsPingPing.Data(b) => got.put(b) } } }
    side.start()
    side ! ActorsPingPing.Peer(sink)
    side ! ActorsPingPing.Start
    side ! ActorsPingPing.Data(Payload.build(10, Payload.PING_A)) // wrong marker: A's own
    side ! ActorsPingPing.Data(Payload.build(10, Payload.PING_B)) // good
    assertTrue(done.await(10, TimeUnit.SECONDS))
    assertEquals(2L, side.received)
    assertEquals(1L, side.errors)
    for (_ <- 1 to 2) {
      val m = got.poll(10, TimeUnit.SECONDS)
      assertTrue(Payload.check(m, 10, Payload.PING_A), "what A sends carries A's marker")
    }
    assertNull(got.poll(200, TimeUnit.MILLISECONDS), "R = 2: message 1 and one answer, no more")
  }

  @Test def exactCounts(): Unit =
    for (reps <- Seq(1, 2, 1000)) {
      val r = ActorsPingPing.run(64, reps, copy = false)
      assertEquals(reps.toLong, r.receivedA)
      assertEquals(reps.toLong, r.receivedB)
      assertEquals(0L, r.payloadErrors)
    }

  @Test def aDeadSideFailsTheRunInsteadOfHanging(): Unit = {
    val done = new CountDownLatch(2)
    val side = new ActorsPingPing.Side(Payload.PING_A, Payload.PING_B, 10, 5, true, done)
    side.start()
    // No Peer yet: the send throws inside the actor, which terminates (scala-actors prints
    // "caught java.lang.NullPointerException" and its stack trace on stderr: expected).
    side ! ActorsPingPing.Start
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    while (!side.failed && System.nanoTime() < deadline) Thread.sleep(10)
    assertTrue(side.failed)
  }
}
