package serverbench.im

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.util.Random

import serverbench.Rt.{Actor, ActorRef}
import serverbench.Rt.Converters._

/** A message sent through a Proc, so counted in its receiver's mailbox length. */
trait Counted

/** One actor of a Proc: its ref and how many Counted messages were sent to it and not yet
  * received. Akka exposes no mailbox length (an unbounded mailbox's numberOfMessages walks a
  * ConcurrentLinkedQueue), so this counter is the mailbox length --chaos-pick queued reads
  * and chaos_dropped_messages counts. */
final class Incarnation(val queued: AtomicInteger) {
  // null while chaos's successor is being made by its supervisor: messages wait in pending
  @volatile private var ref0: ActorRef = _
  private var pending = List.empty[Counted] // newest first
  @volatile var killed = false
  // held by chaos's "queued" pick from the draw to the kill: what is sent waits in pending
  @volatile private var held = false

  def ref: ActorRef = ref0

  def send(msg: Counted): Unit = {
    val r = ref0
    if (r != null && !held) r.tell(msg, ActorRef.noSender)
    else synchronized { if (ref0 != null && !held) ref0.tell(msg, ActorRef.noSender) else pending ::= msg }
  }

  /** The actor made: what waited goes to it first, in order, then everything else. */
  def open(r: ActorRef): Unit = synchronized {
    pending.reverseIterator.foreach(r.tell(_, ActorRef.noSender))
    pending = Nil
    ref0 = r
  }

  /** Chaos's hold: from now on what is sent waits (counted in queued), so that the kill
    * finds it. Akka cannot stop an actor from outside, so the actor still handles what its
    * mailbox held before the hold; Erlang's suspended victim does not. */
  def hold(): Unit = synchronized { held = true }

  /** The hold ends. Not killed (the process ended meanwhile): what waited goes on; killed:
    * it was counted with the mailbox (seal) and goes with it. */
  def release(): Unit = synchronized {
    held = false
    if (killed) pending = Nil
    else if (ref0 != null) open(ref0)
  }

  /** The victim's end (its postStop): what its mailbox still held, all of it lost; the
    * counter then stays far below zero, so a send that raced with the kill counts itself. */
  def seal(): Int = math.max(0, queued.getAndSet(Incarnation.Sealed))
}

object Incarnation {
  val Sealed: Int = Int.MinValue / 2
}

/** An actor behind a Proc: it counts what it takes off its mailbox, and a victim of chaos
  * counts what it leaves there (postStop, after which Akka sends the rest to dead letters). */
trait Tracked extends Actor {
  protected def inc: Incarnation
  protected def counters: Counters

  override def aroundReceive(receive: Receive, msg: Any): Unit = {
    if (msg.isInstanceOf[Counted]) inc.queued.decrementAndGet()
    super.aroundReceive(receive, msg)
  }

  /** How many messages a victim drops with its mailbox (0 for an actor that was not killed). */
  protected def dropMailbox(): Long = if (inc.killed) { val n = inc.seal().toLong; counters.chaosDropped.add(n); n } else 0L

  override def postStop(): Unit = dropMailbox()
}

/** A session, channel or connection "process": the registry's handle on it. Everyone sends
  * through it, so that once chaos swaps in a successor (a fresh actor with an empty mailbox)
  * every new message goes to that successor and none to the victim. */
final class Proc(val kind: Chaos.Kind, c: Counters) {
  @volatile var cur: Incarnation = _
  // connections only: the Akka IO connection (to close the socket when killed), the folded
  // nick it holds (freed at once when killed), the socket's ports (PeerState)
  @volatile var tcp: ActorRef = _
  @volatile var nickKey: String = _
  @volatile var localPort, remotePort = 0

  def tell(msg: Counted): Unit = {
    val i = cur
    if (i.queued.incrementAndGet() < 0) c.chaosDropped.increment() // sent to a victim already gone
    i.send(msg)
  }

  /** A fresh actor (made by make, given its incarnation) as this process's incarnation. */
  def start(make: Incarnation => ActorRef): Unit = {
    val i = new Incarnation(new AtomicInteger)
    i.open(make(i))
    cur = i
  }

  /** Chaos: the registry's next incarnation, whose actor the supervisor makes (Respawn);
    * until then what is sent waits for it. */
  def succeed(): Incarnation = {
    val i = new Incarnation(new AtomicInteger)
    cur = i
    i
  }

  override def toString: String = s"Proc($kind, ${Option(cur).map(_.ref)})"
}

/** Chaos (--chaos-interval-ms T, --chaos-target, --chaos-pick): every T ms one live process
  * of the target kinds is drawn (from --seed's stream) and killed, on the scheduler's thread:
  * the victim leaves the registry at once (its Proc's next incarnation takes every new
  * message, to be handed to the fresh actor its supervisor makes on Respawn; a connection's
  * Proc is simply removed and its nick freed) and is stopped by system.stop: Akka's
  * Terminate system message, handled after the message the victim has in hand and before
  * its next one; its mailbox then goes to dead letters, its length counted in
  * chaos_dropped_messages (Tracked). Not Akka's Kill message, which would wait its turn in the
  * mailbox and restart the actor in place with its mailbox kept. Not the supervisor's own
  * context.stop either: the supervisor runs on the dispatcher's ForkJoinPool, where a tick
  * sent from the scheduler thread is an external submission that waits until the busy
  * workers' own queues are empty, i.e. until every mailbox has drained (measured: 3,693 of
  * 3,694 kills found the victim's mailbox empty), so "queued" could never lose a message.
  * Akka's scheduler ticks every 10 ms, so a tick does the kills due since the last one
  * (T = 1 ms: ten at each tick). */
object Chaos {
  sealed trait Kind
  case object SessionKind extends Kind
  case object ChannelKind extends Kind
  case object ConnectionKind extends Kind

  /** To a session's or channel's supervisor: make the actor of this successor. */
  final case class Respawn(proc: Proc, inc: Incarnation)

  /** Every live process of one kind (written by its supervisor, read by the draw). */
  final class Live {
    val procs: java.util.Set[Proc] = ConcurrentHashMap.newKeySet[Proc]()
  }

  def kinds(target: String): Seq[Kind] = target match {
    case "session" => Seq(SessionKind)
    case "channel" => Seq(ChannelKind)
    case "connection" => Seq(ConnectionKind)
    case _ => Seq(SessionKind, ChannelKind, ConnectionKind)
  }

  /** The draws: how many kills are due at a tick, and each victim. */
  final class Draw(intervalMs: Int, seed: Long, val queuedPick: Boolean, sets: Seq[Live]) {
    private val rng = new Random(seed)
    private val t0 = System.nanoTime()
    private var done = 0L

    def due(): Int = {
      val n = ((System.nanoTime() - t0) / 1000000L / intervalMs - done).toInt
      done += n
      n
    }

    /** A snapshot: O(live processes) a draw, far below the work those processes do. */
    def victim(): Option[Proc] = {
      val all = sets.iterator.flatMap(_.procs.asScala).filter(_.cur != null).toVector
      val busy = if (queuedPick) all.filter(_.cur.queued.get > 0) else Vector.empty
      val from = if (busy.nonEmpty) busy else all
      if (from.isEmpty) None else Some(from(rng.nextInt(from.size)))
    }
  }

  /** The kills (one thread: the scheduler's). */
  final class Monkey(draw: Draw, system: serverbench.Rt.ActorSystem, c: Counters, live: Map[Kind, Live],
                     supervisors: Map[Kind, ActorRef], freeNick: Proc => Unit) extends Runnable {
    // under pick queued: the victim drawn and held at the last draw, with its incarnation
    private var held: Option[(Proc, Incarnation)] = None

    /** Under pick random each victim is killed when drawn; under pick queued the one drawn
      * and held at the last kill is killed, then the next is drawn and held (still
      * registered, what is sent to it waits for the kill: a server that keeps up has no
      * queue to lose otherwise). */
    def run(): Unit = for (_ <- 0 until draw.due()) {
      if (!draw.queuedPick) draw.victim().foreach(p => kill(p, p.cur))
      else {
        held.foreach { case (p, inc) => kill(p, inc); inc.release() } // a killed one is gone
        held = draw.victim().map(p => (p, p.cur))
        held.foreach(_._2.hold())
      }
    }

    private def kill(p: Proc, inc: Incarnation): Unit = {
      if (inc != null && inc.ref != null && (p.cur eq inc) && live(p.kind).procs.contains(p)) p.kind match {
        case ConnectionKind =>
          if (live(p.kind).procs.remove(p)) {
            freeNick(p)
            inc.killed = true
            p.tcp.tell(serverbench.Rt.Tcp.Close, ActorRef.noSender) // the client sees its end (EOF)
            system.stop(inc.ref)
            c.connectionsKilled.increment()
          }
        case kind =>
          val next = p.succeed()
          inc.killed = true
          system.stop(inc.ref)
          (if (kind == SessionKind) c.sessionsKilled else c.channelsKilled).increment()
          supervisors(kind) ! Respawn(p, next)
      }
    }
  }
}
