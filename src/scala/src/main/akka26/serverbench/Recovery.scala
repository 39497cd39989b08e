package serverbench

import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.{AtomicIntegerArray, AtomicLong, AtomicLongArray}
import java.util.concurrent.locks.LockSupport

import scala.collection.mutable.ArrayBuffer
import scala.concurrent.{Await, Promise}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import akka.actor.{Actor, ActorRef, ActorSystem, OneForOneStrategy, Props, SupervisorStrategy}

/** docs/spec.md "recovery": throughput's pairs under an Akka parent that restarts a failed
  * child (OneForOneStrategy, Restart, unlimited retries; the child keeps its ActorRef and
  * mailbox, the message it failed on is dropped), with crashes injected at the seeded
  * schedule every language draws. Counts that must outlive a crash are written by the
  * crash hook, just before the throw, into atomics outside the actor. */
object Recovery {
  sealed trait Msg
  case object Start extends Msg
  final case class Data(buf: Array[Byte]) extends Msg
  final case class Report(exchanges: Long, last: Boolean) extends Msg
  case object Crash extends Msg
  case object Stop extends Msg
  case object Stopped extends Msg
  final case class Held(p: Promise[Long]) extends Msg

  /** The fault: raised by the victim in its own code. */
  final class InjectedCrash extends RuntimeException("injected crash")

  // per-pair slots in the AtomicLongArray, 6 per pair
  private val Sent = 0; private val Received = 1; private val Lost = 2; private val Counted = 3
  private val LostExch = 4; private val Finished = 5

  def splitmix64(state: Long): (Long, Long) = {
    val s = state + 0x9E3779B97F4A7C15L
    var z = s
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL
    (z ^ (z >>> 31), s)
  }

  /** Crash k at (k + u_k) / rate s while < durationS: (seconds, pair 0-based). */
  def schedule(seed: Long, rate: Double, durationS: Double, pairs: Int): Vector[(Double, Int)] = {
    if (rate <= 0) return Vector.empty
    val out = Vector.newBuilder[(Double, Int)]
    var state = seed
    var k = 0L
    while (true) {
      val (x, s1) = splitmix64(state)
      val (y, s2) = splitmix64(s1)
      state = s2
      val at = (k + (x >>> 11).toDouble / 9007199254740992.0) / rate
      if (at >= durationS) return out.result()
      out += ((at, java.lang.Long.remainderUnsigned(y, pairs.toLong).toInt))
      k += 1
    }
    out.result()
  }

  /** The rule across flags that cli.json's ranges cannot state. */
  def usageError(rate: Double, durationS: Double): Option[String] =
    if (rate > 0 && rate * durationS < 1)
      Some(s"--crashes-per-s $rate with --duration-s $durationS expects fewer than one crash " +
        "(crashes-per-s x duration-s must be >= 1, or 0 for no faults)")
    else None

  final class Shared(val pairs: Int) {
    @volatile var stop = false
    val pending = new AtomicIntegerArray(pairs)
    val counts = new AtomicLongArray(6 * pairs)
    val aggLost = new AtomicLong()
    val restarts = new AtomicLong()
    val payloadErrors = new AtomicLong()
    val latenciesNs = new ConcurrentLinkedQueue[java.lang.Long]()
    /** Crash times not yet followed by an exchange, per pair (index pairs: the aggregator);
      * touched only by that actor's incarnations, which Akka runs one after another. */
    val awaiting: Array[ArrayBuffer[Long]] = Array.fill(pairs + 1)(ArrayBuffer.empty[Long])
    val samples = new ConcurrentLinkedQueue[(Long, Long)]()
    def add(i: Int, slot: Int, n: Long): Unit = counts.addAndGet(6 * i + slot, n)
    def sum(slot: Int): Long = (0 until pairs).map(i => counts.get(6 * i + slot)).sum
    def firstAfterCrash(i: Int): Unit = {
      val a = awaiting(i)
      if (a.nonEmpty) {
        val now = System.nanoTime()
        a.foreach(t => latenciesNs.add(now - t))
        a.clear()
      }
    }
  }

  final class Client(bytes: Int, sh: Shared, i: Int) extends Actor {
    private val own = new Owned(bytes, Payload.Client, 1, true)
    private var sent, received = 0L
    def receive: Receive = {
      case Data(buf) =>
        received += 1
        Payload.check(buf, bytes, Payload.Server) // a bad message is counted by the server's check
        sender().tell(Data(own.reply(buf)), self)
        sent += 1
      case Stop =>
        sh.add(i, Sent, sent); sh.add(i, Received, received); sh.add(i, Finished, 1)
        sender() ! Stopped
    }
  }

  final class Server(client: ActorRef, aggregator: ActorRef, bytes: Int, k: Long, sh: Shared, i: Int) extends Actor {
    private val own = new Owned(bytes, Payload.Server, 1, true)
    private var sent, received, count, unreported = 0L

    override def postRestart(reason: Throwable): Unit = { // the new incarnation resumes the pair
      sh.restarts.incrementAndGet()
      client.tell(Data(own.first()), self); sent += 1
    }

    def receive: Receive = {
      case Start => client.tell(Data(own.first()), self); sent += 1
      case Data(buf) =>
        if (sh.pending.get(i) > 0) { // the fault, raised in the server's own code
          sh.pending.decrementAndGet(i)
          sh.add(i, Sent, sent); sh.add(i, Received, received); sh.add(i, Lost, 1)
          sh.add(i, Counted, count); sh.add(i, LostExch, unreported)
          sh.awaiting(i) += System.nanoTime()
          throw new InjectedCrash
        }
        received += 1
        if (!Payload.check(buf, bytes, Payload.Client)) sh.payloadErrors.incrementAndGet()
        count += 1
        sh.firstAfterCrash(i)
        unreported += 1
        if (unreported == k) { aggregator ! Report(k, last = false); unreported = 0 }
        if (sh.stop && sh.pending.get(i) == 0) {
          sh.add(i, Sent, sent); sh.add(i, Received, received); sh.add(i, Counted, count)
          client ! Stop
          context.become(stopping)
        } else { client.tell(Data(own.reply(buf)), self); sent += 1 }
    }

    private def stopping: Receive = {
      case Stopped =>
        sh.add(i, Finished, 1)
        aggregator ! Report(unreported, last = true) // last: main reads the counts after it
    }
  }

  final class Aggregator(sh: Shared, done: Promise[Long]) extends Actor {
    private var held, finals = 0L
    private var lastSample = Long.MinValue
    override def postRestart(reason: Throwable): Unit = sh.restarts.incrementAndGet()
    def receive: Receive = {
      case Crash =>
        sh.aggLost.addAndGet(held) // the state that dies with it (the mailbox survives)
        sh.awaiting(sh.pairs) += System.nanoTime()
        throw new InjectedCrash
      case Report(n, last) =>
        sh.firstAfterCrash(sh.pairs)
        held += n
        val now = System.nanoTime()
        if (lastSample == Long.MinValue || now - lastSample >= 100000000L) { sh.samples.add((now, held)); lastSample = now }
        if (last) { finals += 1; if (finals == sh.pairs) done.trySuccess(held) }
      case Held(p) => p.trySuccess(held)
    }
  }

  /** The parent: creates every process and restarts the one that failed. */
  final class Guardian(a: Args, sh: Shared, done: Promise[Long], break: Boolean, refs: Promise[(ActorRef, Seq[ActorRef])]) extends Actor {
    override val supervisorStrategy: SupervisorStrategy =
      OneForOneStrategy(maxNrOfRetries = -1, loggingEnabled = false) {
        case _: InjectedCrash => if (break) SupervisorStrategy.Stop else SupervisorStrategy.Restart
      }
    private val agg = context.actorOf(Props(new Aggregator(sh, done)), "aggregator")
    private val servers = (0 until a.pairs).map { i =>
      val c = context.actorOf(Props(new Client(a.messageBytes, sh, i)), s"client-$i")
      context.actorOf(Props(new Server(c, agg, a.messageBytes, a.reportEvery, sh, i)), s"server-$i")
    }
    refs.success((agg, servers))
    def receive: Receive = { case Start => servers.foreach(_ ! Start) } // sent from a pool thread (Throughput.Starter)
  }

  final case class Args(pairs: Int, messageBytes: Int, durationS: Double, rate: Double, fault: String, seed: Long, reportEvery: Long)

  def run(system: ActorSystem, r: Cli.Run): Outcome = {
    val p = r.params
    val a = Args(p.int("pairs"), p.int("message_bytes"), p.double("duration_s"), p.double("crashes_per_s"),
      p.str("fault"), p.long("seed"), p.long("report_every"))
    val break = System.getenv("SERVERBENCH_RECOVERY_BREAK") == "1"
    val sh = new Shared(a.pairs)
    val done = Promise[Long]()
    val refs = Promise[(ActorRef, Seq[ActorRef])]()
    val guardian = system.actorOf(Props(new Guardian(a, sh, done, break, refs)), "recovery")
    val (agg, _) = Waits.result(system, refs.future)
    val sched = schedule(a.seed, a.rate, a.durationS, a.pairs).map { case (t, i) => (t, () => { sh.pending.incrementAndGet(i); () }) }
    val aggCrash = if (a.fault == "aggregator") Vector((a.durationS / 2, () => agg ! Crash)) else Vector.empty
    val t0 = System.nanoTime()
    def parkUntil(s: Double): Unit = {
      val until = t0 + (s * 1e9).toLong
      var now = System.nanoTime()
      while (now < until) { LockSupport.parkNanos(until - now); now = System.nanoTime() }
    }
    guardian ! Start
    val crashTimes = (aggCrash ++ sched).sortBy(_._1).map { case (at, f) =>
      parkUntil(at); f(); (System.nanoTime() - t0) / 1e9
    }
    parkUntil(a.durationS)
    sh.stop = true
    val held =
      try Await.result(done.future, 2.seconds + (a.pairs * 1.millis))
      catch { case _: java.util.concurrent.TimeoutException => // a pair left dead never reports
        val hp = Promise[Long](); agg ! Held(hp); Waits.result(system, hp.future)
      }
    val end = System.nanoTime()
    val sent = sh.sum(Sent); val received = sh.sum(Received); val lost = sh.sum(Lost)
    val counted = sh.sum(Counted); val lostExch = sh.sum(LostExch) + sh.aggLost.get
    val minPair = (0 until a.pairs).map(i => sh.counts.get(6 * i + Counted)).min
    val alive = sh.sum(Finished)
    val lats = sh.latenciesNs.asScala.toVector.map(_ / 1e9)
    val restarts = sh.restarts.get
    val errors = sh.payloadErrors.get
    val injected = crashTimes.size.toLong
    val elapsed = (end - t0) / 1e9
    val samples = sh.samples.asScala.toVector.sortBy(_._1).map { case (t, h) => ((t - t0) / 1e9, h) } :+ ((elapsed, held))
    val msgBal = sent == received + lost
    val excBal = counted == held + lostExch
    val ok = restarts == injected && lats.size == restarts && alive == 2L * a.pairs && msgBal && excBal &&
      errors == 0 && minPair >= 1 && held > 0
    Outcome(
      Json.Obj("pairs" -> Json.int(a.pairs), "message_bytes" -> Json.int(a.messageBytes), "duration_s" -> Json.num(a.durationS),
        "crashes_per_s" -> Json.num(a.rate), "fault" -> Json.Str(a.fault), "seed" -> Json.int(a.seed),
        "report_every" -> Json.int(a.reportEvery)),
      Json.Obj(
        "exchanges" -> Json.int(held), "elapsed_s" -> Json.num(elapsed),
        "exchanges_per_s" -> Json.num(if (elapsed > 0) held / elapsed else 0.0),
        "samples" -> Json.Arr(samples.map { case (t, h) => Json.Arr(Seq(Json.num(math.max(0.0, t)), Json.int(h))) }),
        "crashes_injected" -> Json.int(injected), "aggregator_crashes" -> Json.int(aggCrash.size.toLong),
        "restarts" -> Json.int(restarts),
        "crash_times_s" -> Json.Arr(crashTimes.map(Json.num)), "restart_latency_s" -> Json.Arr(lats.map(Json.num)),
        "messages_sent" -> Json.int(sent), "messages_received" -> Json.int(received), "messages_lost" -> Json.int(lost),
        "exchanges_counted" -> Json.int(counted), "exchanges_lost" -> Json.int(lostExch),
        "supervision" -> Json.Str("Akka parent, OneForOneStrategy Restart")),
      Json.Obj("ok" -> Json.Bool(ok), "crashes_injected" -> Json.int(injected), "restarts" -> Json.int(restarts),
        "restart_latency_samples" -> Json.int(lats.size.toLong), "workers_alive" -> Json.int(alive),
        "workers_expected" -> Json.int(2L * a.pairs), "messages_balance" -> Json.Bool(msgBal),
        "exchanges_balance" -> Json.Bool(excBal), "payload_errors" -> Json.int(errors), "min_pair_exchanges" -> Json.int(minPair)),
      ok)
  }
}
