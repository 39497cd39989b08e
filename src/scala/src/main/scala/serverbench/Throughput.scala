package serverbench

import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.LockSupport

import scala.collection.mutable.ArrayBuffer
import scala.concurrent.Promise

import akka.actor.{Actor, ActorRef, ActorSystem, Props}

/** docs/spec.md "throughput": P server/client pairs exchange messages until a stop flag;
  * servers report every K exchanges to one aggregator. */
object Throughput {
  sealed trait Msg
  case object Go extends Msg
  case object Start extends Msg
  final case class Data(buf: Array[Byte]) extends Msg
  final case class Report(exchanges: Long) extends Msg
  final case class Final(remainder: Long, total: Long) extends Msg

  /** Shared by all servers: the stop flag, read once per exchange, and the error count
    * (touched only when a check fails, so it costs nothing in a correct run). */
  final class Shared {
    @volatile var stop: Boolean = false
    @volatile var t0Nanos: Long = 0L // the clock's start, written before any Start is sent
    val payloadErrors = new AtomicLong()
  }

  final case class Result(endNanos: Long, reported: Long, counted: Long, minPair: Long, samples: Vector[(Double, Long)])

  final class Client(bytes: Int, copy: Boolean, shared: Shared) extends Actor {
    private val own = new Owned(bytes, Payload.Client, 1, copy)
    def receive: Receive = {
      case Data(buf) =>
        if (!Payload.check(buf, bytes, Payload.Server)) shared.payloadErrors.incrementAndGet()
        sender().tell(Data(own.reply(buf)), self)
    }
  }

  final class Server(client: ActorRef, aggregator: ActorRef, bytes: Int, k: Long, copy: Boolean, shared: Shared)
      extends Actor {
    private val own = new Owned(bytes, Payload.Server, 1, copy)
    private var count = 0L

    def receive: Receive = {
      case Data(buf) =>
        if (!Payload.check(buf, bytes, Payload.Client)) shared.payloadErrors.incrementAndGet()
        count += 1 // one exchange: our message went out and the checked answer came back
        if (count % k == 0) aggregator ! Report(k)
        if (shared.stop) {
          aggregator ! Final(count % k, count)
          context.become(Actor.emptyBehavior) // stopped: sends nothing more
        } else client.tell(Data(own.reply(buf)), self)
      case Start => client.tell(Data(own.first()), self)
    }
  }

  /** The main process's hands inside the pool: it sends every server its Start.
    * Why not the main thread: on JDK 17 a ForkJoinPool worker keeps running the tasks in
    * its own queue before it looks at tasks submitted from outside the pool, and a busy
    * server/client pair always has one queued. A Start sent from a plain thread (and any
    * later message to that idle-but-scheduled mailbox) could then wait for the whole run
    * when pairs > schedulers. Sent from a pool thread, every mailbox enters a worker's
    * FIFO queue and takes its turn. */
  final class Starter(servers: Seq[ActorRef]) extends Actor {
    def receive: Receive = {
      case Go => servers.foreach(_ ! Start)
    }
  }

  final class Aggregator(pairs: Int, minIntervalNanos: Long, shared: Shared, done: Promise[Result]) extends Actor {
    private def t0 = shared.t0Nanos // written by main before Go, so before any report
    private var total = 0L
    private var counted = 0L
    private var minPair = Long.MaxValue
    private var finals = 0
    private var lastSample = Long.MinValue
    private val samples = ArrayBuffer.empty[(Double, Long)]

    def receive: Receive = {
      case Report(n) =>
        total += n
        val now = System.nanoTime()
        if (lastSample == Long.MinValue || now - lastSample >= minIntervalNanos) {
          samples += (((now - t0) / 1e9, total))
          lastSample = now
        }
      case Final(rem, cnt) =>
        total += rem
        counted += cnt
        if (cnt < minPair) minPair = cnt
        finals += 1
        if (finals == pairs) {
          val end = System.nanoTime() // the clock stops when the last final arrives
          samples += (((end - t0) / 1e9, total))
          done.success(Result(end, total, counted, minPair, samples.toVector))
        }
    }
  }

  /** spec/cli.json throughput_sample_min_interval_s. */
  val SampleMinIntervalS = 0.1

  def run(system: ActorSystem, a: Cli.ThroughputArgs): Outcome = {
    val shared = new Shared
    val done = Promise[Result]()
    val aggregator = system.actorOf(Props(new Aggregator(a.pairs, (SampleMinIntervalS * 1e9).toLong, shared, done)), "aggregator")
    val servers = Array.tabulate(a.pairs) { i =>
      val client = system.actorOf(Props(new Client(a.messageBytes, a.payloadCopy, shared)), s"client-$i")
      system.actorOf(Props(new Server(client, aggregator, a.messageBytes, a.reportEvery.toLong, a.payloadCopy, shared)),
        s"server-$i")
    }
    val starter = system.actorOf(Props(new Starter(servers.toSeq)), "starter")

    val t0 = System.nanoTime()
    shared.t0Nanos = t0
    starter ! Go
    val deadline = t0 + (a.durationS * 1e9).toLong
    var now = System.nanoTime()
    while (now < deadline) {
      LockSupport.parkNanos(deadline - now)
      now = System.nanoTime()
    }
    shared.stop = true
    val r = Waits.result(system, done.future)

    val elapsedS = (r.endNanos - t0) / 1e9
    val errors = shared.payloadErrors.get
    val ok = r.reported == r.counted && errors == 0 && r.minPair >= 1
    val perS = r.reported / elapsedS
    Outcome(
      Json.Obj(
        "pairs" -> Json.int(a.pairs),
        "message_bytes" -> Json.int(a.messageBytes),
        "duration_s" -> Json.num(a.durationS),
        "report_every" -> Json.int(a.reportEvery),
        "payload" -> Json.Str(if (a.payloadCopy) "copy" else "share")),
      Json.Obj(
        "exchanges" -> Json.int(r.reported),
        "elapsed_s" -> Json.num(elapsedS),
        "exchanges_per_s" -> Json.num(perS),
        "paper_msgs_per_min" -> Json.num(perS * 60),
        "samples" -> Json.Arr(r.samples.map { case (t, c) => Json.Arr(Seq(Json.num(math.max(0.0, t)), Json.int(c))) })),
      Json.Obj(
        "ok" -> Json.Bool(ok),
        "reported_exchanges" -> Json.int(r.reported),
        "counted_exchanges" -> Json.int(r.counted),
        "payload_errors" -> Json.int(errors),
        "min_pair_exchanges" -> Json.int(r.minPair)),
      ok)
  }
}
