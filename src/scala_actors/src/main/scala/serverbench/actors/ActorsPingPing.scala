package serverbench.actors

import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.actors.Actor

import serverbench.jvm.{Owned, Payload, PingPingResult}

/** docs/spec.md "pingping" with two scala.actors.Actor's, event-based (`loop`/`react`: an
  * actor holds no thread while it waits, as in Akka). The same steps as the Scala/Akka
  * program's PingPing.scala: A and B each send R messages to the other; each receive is
  * checked and answered while the receiver has sent fewer than R. */
object ActorsPingPing {
  final case class Peer(ref: Actor)
  case object Start
  final case class Data(buf: Array[Byte])

  final class Side(me: Byte, peerMarker: Byte, bytes: Int, reps: Int, copy: Boolean, done: CountDownLatch)
      extends Actor {
    // This side's own buffers (two, used in turn: Owned), built before the clock starts.
    private val own = new Owned(bytes, me, 2, copy)
    private var peer: Actor = null
    private var sent = 0
    // Written by this actor only; read by main after `done` opens (the latch orders them).
    @volatile var received = 0L
    @volatile var errors = 0L
    @volatile private var finished = false

    /** Terminated without having received R messages (an exception ended it). */
    def failed: Boolean = !finished && getState == Actor.State.Terminated

    def act(): Unit = loop {
      react {
        case Data(buf) =>
          if (!Payload.check(buf, bytes, peerMarker)) errors += 1
          received += 1
          if (sent < reps) {
            peer ! Data(own.reply(buf))
            sent += 1
          }
          if (received == reps) {
            finished = true
            done.countDown() // tells main
            exit() // nothing more will come; lets the scheduler stop when both are done
          }
        case Peer(ref) => peer = ref
        case Start =>
          peer ! Data(own.first())
          sent = 1
      }
    }
  }

  def run(bytes: Int, reps: Int, copy: Boolean): PingPingResult = {
    val done = new CountDownLatch(2)
    val a = new Side(Payload.PING_A, Payload.PING_B, bytes, reps, copy, done)
    val b = new Side(Payload.PING_B, Payload.PING_A, bytes, reps, copy, done)
    a.start()
    b.start()
    a ! Peer(b)
    b ! Peer(a)

    val t0 = System.nanoTime()
    a ! Start
    b ! Start
    // A timed await returns as soon as the latch opens: polling adds nothing to the time.
    // An actor that died (e.g. OutOfMemoryError) must not leave main waiting forever.
    while (!done.await(50, TimeUnit.MILLISECONDS)) {
      if (a.failed || b.failed)
        throw new IllegalStateException("a pingping actor terminated before receiving R messages (see stderr)")
    }
    val elapsedNs = System.nanoTime() - t0
    new PingPingResult(elapsedNs, a.received, b.received, a.errors + b.errors)
  }
}
