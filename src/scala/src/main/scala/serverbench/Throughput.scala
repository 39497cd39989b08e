package serverbench

import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}
import java.util.concurrent.locks.LockSupport

import scala.collection.mutable.ArrayBuffer
import scala.concurrent.Promise

import Rt.{Actor, ActorRef, ActorSystem, Props}

/** docs/spec.md "throughput": P server/client pairs exchange messages until a stop flag;
  * servers report every K exchanges to one aggregator. */
object Throughput {
  sealed trait Msg
  case object Go extends Msg
  case object Start extends Msg
  final case class Data(buf: Array[Byte]) extends Msg
  final case class Report(exchanges: Long) extends Msg
  final case class Final(remainder: Long, total: Long) extends Msg
  /** The original's "Show" (ConcurrentProcessesThroughput/scala/maxSpeakers.scala lines
    * 50-53, 83): the aggregator answers with the sum of whole batches it holds and the
    * wall-clock ms, unless the main thread's exit won the race (race already 1). */
  final case class Show(race: AtomicInteger, shown: Promise[(Long, Long)]) extends Msg

  /** counting batched: the original's servers report every 1,000 (line 32) and never the rest. */
  val OriginalBatch = 1000L
  /** exit race: the original's main thread calls scala.sys.exit(0) right after sending
    * "Show" (line 84); the JVM runs its shutdown hooks and halts ~0.5-0.8 ms later (median
    * of 5 measured on this VM, JDK 17: 0.47-2.4 ms, one 26 ms). The manager prints only if
    * it reaches "Show" within that time. */
  val ExitGraceNanos = 750000L

  /** Shared by all servers: the stop flag, read once per exchange, and the error count
    * (touched only when a check fails, so it costs nothing in a correct run). */
  final class Shared {
    @volatile var stop: Boolean = false
    @volatile var t0Nanos: Long = 0L // the clock's start, written before any Start is sent
    @volatile var t00Ms: Long = 0L // window original: the manager's clock start (line 46)
    val batchSum = new AtomicLong() // exit wait: the aggregator's whole batches, read by main
    val payloadErrors = new AtomicLong()
  }

  final case class Result(endNanos: Long, reported: Long, counted: Long, minPair: Long, samples: Vector[(Double, Long)])

  /** send clone: a new array per message (lines 19, 30), our marker written into it. */
  private def cloned(buf: Array[Byte], marker: Byte): Array[Byte] = { val c = buf.clone(); c(0) = marker; c }

  final class Client(bytes: Int, copy: Boolean, shared: Shared, clone: Boolean = false) extends Actor {
    private val own = new Owned(bytes, Payload.Client, 1, copy)
    def receive: Receive = {
      case Data(buf) =>
        if (!Payload.check(buf, bytes, Payload.Server)) shared.payloadErrors.incrementAndGet()
        sender().tell(Data(if (clone) cloned(buf, Payload.Client) else own.reply(buf)), self)
    }
  }

  final class Server(client: ActorRef, aggregator: ActorRef, bytes: Int, k: Long, copy: Boolean, shared: Shared,
                     clone: Boolean = false) extends Actor {
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
        } else client.tell(Data(if (clone) cloned(buf, Payload.Server) else own.reply(buf)), self)
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
  final class Starter(servers: Seq[ActorRef], shared: Shared) extends Actor {
    def receive: Receive = {
      case Go =>
        shared.t00Ms = System.currentTimeMillis()
        servers.foreach(_ ! Start)
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
      case Show(race, shown) =>
        // Before the stop flag, total holds only whole batches.
        if (race.compareAndSet(0, 2)) shown.trySuccess((total, System.currentTimeMillis()))
      case Report(n) =>
        total += n
        shared.batchSum.addAndGet(n)
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

  private def paperMetrics(knobs: Map[String, String], printed: Boolean, shown: Promise[(Long, Long)], shared: Shared,
                           batched: Boolean, k: Long, trueN: Long, trueS: Double): Seq[(String, Json.Value)] = {
    def perMin(n: Long, s: Double): Double = if (s > 0) n / s * 60 else 0.0
    val reported: Seq[(String, Json.Value)] =
      if (!printed) Seq("reported_exchanges" -> Json.Null, "reported_elapsed_s" -> Json.Null, "reported_msgs_per_min" -> Json.Null)
      else {
        val (batchSum, showMs) = shown.future.value.get.get
        val n = if (batched) batchSum else trueN
        val s = if (knobs.get("window").contains("original")) Knobs.reportedSeconds(shared.t00Ms, showMs) else trueS
        Seq("reported_exchanges" -> Json.int(n), "reported_elapsed_s" -> Json.num(s), "reported_msgs_per_min" -> Json.num(perMin(n, s)))
      }
    Seq("reported_printed" -> Json.Bool(printed)) ++ reported ++ Seq(
      "true_exchanges" -> Json.int(trueN), "true_elapsed_s" -> Json.num(trueS),
      "true_msgs_per_min" -> Json.num(perMin(trueN, trueS)), "batch_size" -> Json.int(k))
  }

  /** spec/cli.json throughput_sample_min_interval_s. */
  val SampleMinIntervalS = 0.1

  def run(system: ActorSystem, a: Cli.ThroughputArgs, knobs: Map[String, String] = Map.empty): Outcome = {
    val paper = a.variant != "fair"
    val send = knobs.getOrElse("send", "payload")
    val clone = send == "clone"
    val copy = if (send == "payload") a.payloadCopy else send == "copy"
    val batched = knobs.get("counting").contains("batched")
    val k = if (batched) OriginalBatch else a.reportEvery.toLong
    val shared = new Shared
    val done = Promise[Result]()
    val aggregator = system.actorOf(Props(new Aggregator(a.pairs, (SampleMinIntervalS * 1e9).toLong, shared, done)), "aggregator")
    val servers = Array.tabulate(a.pairs) { i =>
      val client = system.actorOf(Props(new Client(a.messageBytes, copy, shared, clone)), s"client-$i")
      system.actorOf(Props(new Server(client, aggregator, a.messageBytes, k, copy, shared, clone)),
        s"server-$i")
    }
    val starter = system.actorOf(Props(new Starter(servers.toSeq, shared)), "starter")

    val t0 = System.nanoTime()
    shared.t0Nanos = t0
    starter ! Go
    val deadline = t0 + (a.durationS * 1e9).toLong
    var now = System.nanoTime()
    while (now < deadline) {
      LockSupport.parkNanos(deadline - now)
      now = System.nanoTime()
    }
    // paper/mixed: what the original printed, sent from the main thread as it did
    val race = new AtomicInteger(0)
    val shown = Promise[(Long, Long)]()
    var printed = true
    if (paper) {
      val exitRace = knobs.get("exit").contains("race")
      // race: Show from the main thread, as the original (a submission from outside the
      // pool may wait behind busy workers: that is the quirk). wait: main reads the
      // aggregator's sum itself (a message could be starved the same way and never stop).
      if (!exitRace) { race.set(2); shown.success((shared.batchSum.get, System.currentTimeMillis())) }
      else {
        aggregator ! Show(race, shown)
        LockSupport.parkNanos(ExitGraceNanos)
        printed = !race.compareAndSet(0, 1) // 1: the JVM would have halted first
      }
      if (printed) Waits.result(system, shown.future)
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
      Json.Obj(Seq[(String, Json.Value)](
        "exchanges" -> Json.int(r.reported),
        "elapsed_s" -> Json.num(elapsedS),
        "exchanges_per_s" -> Json.num(perS),
        "paper_msgs_per_min" -> Json.num(perS * 60),
        "samples" -> Json.Arr(r.samples.map { case (t, c) => Json.Arr(Seq(Json.num(math.max(0.0, t)), Json.int(c))) })) ++
        (if (!paper) Nil else paperMetrics(knobs, printed, shown, shared, batched, k, r.reported, elapsedS)): _*),
      Json.Obj(
        "ok" -> Json.Bool(ok),
        "reported_exchanges" -> Json.int(r.reported),
        "counted_exchanges" -> Json.int(r.counted),
        "payload_errors" -> Json.int(errors),
        "min_pair_exchanges" -> Json.int(r.minPair)),
      ok)
  }
}
