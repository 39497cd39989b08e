package serverbench.im

import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import scala.concurrent.{Await, Promise}
import scala.concurrent.duration._

import serverbench.Rt.{Actor, ActorRef, ActorSystem, Props}

object ProcsTest {
  final case class N(i: Int) extends Counted

  /** Counts what it receives; blocks on its first message until `gate` opens. */
  final class Sink(protected val inc: Incarnation, c: Counters, gate: CountDownLatch,
                           got: java.util.concurrent.ConcurrentLinkedQueue[Int], done: CountDownLatch) extends Tracked {
    protected def counters: Counters = c
    def receive: Receive = { case N(i) => gate.await(10, TimeUnit.SECONDS); got.add(i); done.countDown() }
  }

  /** Makes the sinks as its children, as the server's supervisors make sessions: a child's
    * system.stop is its Terminate system message at once, where a top-level actor's goes
    * through the guardian's mailbox first (StopChild), racing the queued messages. */
  final class Parent extends Actor {
    def receive: Receive = { case (p: Props, made: Promise[ActorRef] @unchecked) => made.success(context.actorOf(p)) }
  }

  def child(parent: ActorRef, p: Props): ActorRef = {
    val made = Promise[ActorRef]()
    parent ! ((p, made))
    Await.result(made.future, 10.seconds)
  }

}

/** The chaos bookkeeping (Procs.scala): the mailbox length a Proc counts, a victim's mailbox
  * counted as dropped and its successor taking every message sent since the kill, in order. */
class ProcsTest {
  import ProcsTest._

  @Test def aVictimsMailboxIsCountedAsDroppedAndItsSuccessorGetsWhatCameSince(): Unit = {
    val system = ActorSystem("procs-test")
    try {
      val c = new Counters
      val gate = new CountDownLatch(1)
      val oldGot, newGot = new java.util.concurrent.ConcurrentLinkedQueue[Int]()
      val oldDone, newDone = new CountDownLatch(1)
      val parent = system.actorOf(Props(new Parent))
      val p = new Proc(Chaos.SessionKind, c)
      p.start(i => child(parent, Props(new Sink(i, c, gate, oldGot, oldDone))))
      val victim = p.cur
      (1 to 5).foreach(i => p.tell(N(i))) // the first in hand (blocked), four queued
      while (victim.queued.get != 4) Thread.sleep(1)
      val next = p.succeed() // chaos: out of the registry at once...
      victim.killed = true
      system.stop(victim.ref) // ...and a system message, taken before the next queued message
      (6 to 8).foreach(i => p.tell(N(i))) // wait for the successor
      gate.countDown()
      val doneNew = new CountDownLatch(3)
      next.open(child(parent, Props(new Sink(next, c, new CountDownLatch(0), newGot, doneNew))))
      assertTrue(doneNew.await(10, TimeUnit.SECONDS))
      assertTrue(oldDone.await(10, TimeUnit.SECONDS))
      val deadline = System.nanoTime() + 10000000000L
      while (c.chaosDropped.sum != 4 && System.nanoTime() < deadline) Thread.sleep(5)
      assertEquals(List(1), oldGot.toArray.toList) // nothing after the message in hand
      assertEquals(4L, c.chaosDropped.sum)
      assertEquals(List(6, 7, 8), newGot.toArray.toList)
      assertEquals(0, next.queued.get)
      p.tell(N(9)) // a late send to a sealed victim counts itself: not here, the successor is current
      assertEquals(4L, c.chaosDropped.sum)
    } finally system.terminate()
  }

  @Test def theQueuedDrawPicksOnlyABusyProcess(): Unit = {
    val c = new Counters
    val live = new Chaos.Live
    val procs = (1 to 10).map { _ =>
      val p = new Proc(Chaos.SessionKind, c)
      p.cur = new Incarnation(new java.util.concurrent.atomic.AtomicInteger)
      live.procs.add(p)
      p
    }
    procs(7).cur.queued.set(3)
    val draw = new Chaos.Draw(1, 42, queuedPick = true, Seq(live))
    (1 to 20).foreach(_ => assertSame(procs(7), draw.victim().get))
    procs(7).cur.queued.set(0)
    val random = (1 to 200).map(_ => draw.victim().get).toSet
    assertTrue(random.size > 5, s"${random.size} distinct victims") // none busy: uniform over all
  }
}
