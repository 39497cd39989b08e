package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.duration._
import scala.util.Random

import serverbench.Rt.{Actor, ActorKilledException, ActorRef, ByteString, Kill, OneForOneStrategy, Props,
  SupervisorStrategy, Terminated}

/** The chat sessions (docs/im.md, RD-IM's chat-session processes): one actor per
  * conversation, i.e. per unordered pair of folded nicks, forwarding each one-to-one PRIVMSG
  * to its receiver's connection actor. The Sessions actor creates them (so that two clients
  * asking at once get one), supervises them (a session the chaos monkey kills is restarted:
  * Akka restarts an actor in place, so its mailbox survives and only the message it was
  * handling is lost) and ends a client's sessions when it leaves or changes its nick.
  * Connection actors find a session in `table` (written by the Sessions actor alone) and
  * send to it directly; they come here only for one they do not find. */
object Sessions {
  type Key = (String, String)
  final case class Entry(session: ActorRef, a: ActorRef, b: ActorRef) {
    def joins(x: ActorRef, y: ActorRef): Boolean = (a == x && b == y) || (a == y && b == x)
  }

  /** A PRIVMSG whose session the sender did not find. */
  final case class Open(key: Key, from: ActorRef, to: ActorRef, line: ByteString)
  /** End every session of the client (its nick, which keys them, changed). */
  final case class LeaveAll(client: ActorRef)
  private case object ChaosTick

  def key(x: String, y: String): Key = if (x <= y) (x, y) else (y, x)

  def props(table: ConcurrentHashMap[Key, Entry], c: Counters, chaosMs: Int, seed: Long): Props =
    Props(new Sessions(table, c, chaosMs, seed))
}

final class Sessions(table: ConcurrentHashMap[Sessions.Key, Sessions.Entry], c: Counters, chaosMs: Int, seed: Long)
    extends Actor {
  import Sessions._

  private val rng = new Random(seed)
  private val byClient = scala.collection.mutable.HashMap.empty[ActorRef, Set[Key]]

  override val supervisorStrategy: SupervisorStrategy = OneForOneStrategy() {
    case _: ActorKilledException => SupervisorStrategy.Restart // the chaos monkey's kill
    case _: Exception => SupervisorStrategy.Restart
  }

  override def preStart(): Unit =
    if (chaosMs > 0)
      context.system.scheduler.scheduleWithFixedDelay(chaosMs.millis, chaosMs.millis, self, ChaosTick)(context.dispatcher)

  def receive: Receive = {
    case Open(k, from, to, line) =>
      val found = table.get(k)
      val entry =
        if (found != null && found.joins(from, to)) found
        else {
          if (found != null) end(k, found) // the pair's nicks now belong to other clients
          val e = Entry(context.actorOf(Props(new Session(c))), from, to)
          table.put(k, e)
          c.sessionsStarted.increment()
          for (x <- Seq(from, to)) {
            if (!byClient.contains(x)) context.watch(x)
            byClient(x) = byClient.getOrElse(x, Set.empty) + k
          }
          e
        }
      entry.session ! Session.Route(to, line)

    case LeaveAll(client) => endAll(client)

    case Terminated(client) =>
      endAll(client)
      byClient.remove(client)

    case ChaosTick =>
      val live = context.children.toVector
      if (live.nonEmpty) {
        live(rng.nextInt(live.size)) ! Kill
        c.sessionsKilled.increment()
      }
  }

  private def endAll(client: ActorRef): Unit =
    for (k <- byClient.getOrElse(client, Set.empty)) Option(table.get(k)).foreach(e => end(k, e))

  /** Ends a session for good (stopped, not restarted). */
  private def end(k: Key, e: Entry): Unit = {
    table.remove(k, e)
    context.stop(e.session)
    for (x <- Seq(e.a, e.b)) byClient.get(x).foreach(ks => byClient(x) = ks - k)
  }
}

/** One conversation: forwards each PRIVMSG to its receiver. */
object Session {
  final case class Route(to: ActorRef, line: ByteString)
}

final class Session(c: Counters) extends Actor {
  override def postRestart(reason: Throwable): Unit = c.sessionsRestarted.increment()

  def receive: Receive = { case Session.Route(to, line) =>
    to ! Conn.Deliver(line)
    c.routed.increment()
  }
}
