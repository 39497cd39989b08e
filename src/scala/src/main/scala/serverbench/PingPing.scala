package serverbench

import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicLongArray

import Rt.{Actor, ActorRef, ActorSystem, Props}

/** docs/spec.md "pingping": A and B each send R messages to the other; each receive is
  * checked and answered while the receiver has sent fewer than R. */
object PingPing {
  sealed trait Msg
  final case class Peer(ref: ActorRef) extends Msg
  case object Start extends Msg
  final case class Data(buf: Array[Byte]) extends Msg

  /** Slots in the shared result array: (received, payload errors) of A, then of B. */
  final class Side(me: Byte, peerMarker: Byte, bytes: Int, reps: Int, copy: Boolean,
                   results: AtomicLongArray, slot: Int, done: CountDownLatch, clone: Boolean = false) extends Actor {
    // This side's own buffers (two: see Owned), built before the clock starts.
    private val own = new Owned(bytes, me, 2, copy)
    private var peer: ActorRef = ActorRef.noSender
    private var sent = 0
    private var received = 0
    private var errors = 0L

    def receive: Receive = {
      case Data(buf) =>
        if (!Payload.check(buf, bytes, peerMarker)) errors += 1
        received += 1
        if (sent < reps) {
          // send clone: a new array per message, as ProcessCommunicationLatency/scala/
          // pingping.scala line 24 (data.clone()); our marker is written into it.
          val out = if (clone) { val c = buf.clone(); c(0) = me; c } else own.reply(buf)
          peer.tell(Data(out), self)
          sent += 1
        }
        if (received == reps) {
          results.set(slot, received)
          results.set(slot + 1, errors)
          done.countDown() // tells main; the latch also publishes the two writes above
        }
      case Peer(ref) => peer = ref
      case Start =>
        peer.tell(Data(own.first()), self)
        sent = 1
    }
  }

  def run(system: ActorSystem, a: Cli.PingPingArgs, knobs: Map[String, String] = Map.empty): Outcome = {
    val send = knobs.getOrElse("send", "payload")
    val clone = send == "clone"
    val copy = if (send == "payload") a.payloadCopy else send == "copy"
    val results = new AtomicLongArray(4)
    val done = new CountDownLatch(2)
    val sideA = system.actorOf(Props(new Side(Payload.PingA, Payload.PingB, a.messageBytes, a.repetitions,
      copy, results, 0, done, clone)), "a")
    val sideB = system.actorOf(Props(new Side(Payload.PingB, Payload.PingA, a.messageBytes, a.repetitions,
      copy, results, 2, done, clone)), "b")
    sideA ! Peer(sideB)
    sideB ! Peer(sideA)

    val t0Ms = System.currentTimeMillis()
    val t0 = System.nanoTime()
    sideA ! Start
    sideB ! Start
    Waits.latch(system, done)
    val elapsedNs = System.nanoTime() - t0
    val t1Ms = System.currentTimeMillis()

    val messages = 2L * a.repetitions
    val recA = results.get(0)
    val recB = results.get(2)
    val errors = results.get(1) + results.get(3)
    val ok = recA == a.repetitions && recB == a.repetitions && errors == 0
    val params = Json.Obj(
      "message_bytes" -> Json.int(a.messageBytes),
      "repetitions" -> Json.int(a.repetitions),
      "payload" -> Json.Str(if (a.payloadCopy) "copy" else "share"))
    val paper: Seq[(String, Json.Value)] =
      if (a.variant == "fair") Nil
      else Seq("reported_elapsed_s" -> Json.num(Knobs.reportedSeconds(t0Ms, t1Ms)), "true_elapsed_s" -> Json.num(elapsedNs / 1e9))
    val metrics = Json.Obj(Seq[(String, Json.Value)](
      "elapsed_s" -> Json.num(elapsedNs / 1e9),
      "messages" -> Json.int(messages),
      "ns_per_message" -> Json.num(elapsedNs.toDouble / messages)) ++ paper: _*)
    val validation = Json.Obj(
      "ok" -> Json.Bool(ok),
      "received_a" -> Json.int(recA),
      "received_b" -> Json.int(recB),
      "payload_errors" -> Json.int(errors))
    Outcome(params, metrics, validation, ok)
  }
}
