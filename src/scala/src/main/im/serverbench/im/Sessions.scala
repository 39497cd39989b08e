package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import serverbench.Rt.{Actor, ActorRef, ByteString, Props, SupervisorStrategy, Terminated}

/** The chat sessions (docs/im.md, RD-IM's chat-session processes): one actor per
  * conversation, i.e. per unordered pair of folded nicks, forwarding each one-to-one PRIVMSG
  * to its receiver's connection. The Sessions actor creates them (so that two clients asking
  * at once get one), supervises them and ends a client's sessions when it leaves or changes
  * its nick. A session chaos kills (Chaos.Monkey) is succeeded here by a fresh actor with an
  * empty mailbox behind the same Proc (Respawn); one that throws is restarted by Akka in
  * place. Connections find a session in
  * `table` (written by the Sessions actor alone) and send to it directly; they come here
  * only for one they do not find. */
object Sessions {
  type Key = (String, String)
  final case class Entry(session: Proc, a: Proc, b: Proc) {
    def joins(x: Proc, y: Proc): Boolean = (a == x && b == y) || (a == y && b == x)
  }

  /** A PRIVMSG whose session the sender did not find. */
  final case class Open(key: Key, from: Proc, to: Proc, line: ByteString)
  /** End every session of the client (its nick, which keys them, changed). */
  final case class LeaveAll(client: Proc)

  def key(x: String, y: String): Key = if (x <= y) (x, y) else (y, x)

  def props(table: ConcurrentHashMap[Key, Entry], c: Counters, live: Chaos.Live): Props =
    Props(new Sessions(table, c, live))
}

final class Sessions(table: ConcurrentHashMap[Sessions.Key, Sessions.Entry], c: Counters, live: Chaos.Live)
    extends Actor {
  import Sessions._

  private val byClient = scala.collection.mutable.HashMap.empty[Proc, Set[Key]]
  private val byRef = scala.collection.mutable.HashMap.empty[ActorRef, Proc]

  override val supervisorStrategy: SupervisorStrategy = SupervisorStrategy.defaultStrategy

  private def spawn(p: Proc): Unit = p.start(i => context.actorOf(Props(new Session(c, i))))

  def receive: Receive = {
    case Open(k, from, to, line) =>
      val found = table.get(k)
      val entry =
        if (found != null && found.joins(from, to)) found
        else {
          if (found != null) end(k, found) // the pair's nicks now belong to other clients
          val p = new Proc(Chaos.SessionKind, c)
          spawn(p)
          val e = Entry(p, from, to)
          table.put(k, e)
          live.procs.add(p)
          c.sessionsStarted.increment()
          for (x <- Seq(from, to)) {
            if (!byClient.contains(x)) { context.watch(x.cur.ref); byRef(x.cur.ref) = x }
            byClient(x) = byClient.getOrElse(x, Set.empty) + k
          }
          e
        }
      entry.session.tell(Session.Route(to, line))
      from.tell(Conn.Opened(k))

    case LeaveAll(client) => endAll(client)

    case Terminated(ref) => // a connection ended, however: its sessions with it
      byRef.remove(ref).foreach { client =>
        endAll(client)
        byClient.remove(client)
      }

    case Chaos.Respawn(p, inc) => // a victim's successor: fresh, its mailbox what was sent since
      if (live.procs.contains(p)) {
        inc.open(context.actorOf(Props(new Session(c, inc))))
        c.sessionsRestarted.increment()
      }
  }

  private def endAll(client: Proc): Unit =
    for (k <- byClient.getOrElse(client, Set.empty)) Option(table.get(k)).foreach(e => end(k, e))

  /** Ends a session for good (stopped, not restarted). */
  private def end(k: Key, e: Entry): Unit = {
    table.remove(k, e)
    live.procs.remove(e.session)
    Option(e.session.cur.ref).foreach(context.stop) // none: chaos's successor, not yet made
    for (x <- Seq(e.a, e.b)) byClient.get(x).foreach(ks => byClient(x) = ks - k)
  }
}

/** One conversation: forwards each PRIVMSG to its receiver. */
object Session {
  final case class Route(to: Proc, line: ByteString) extends Counted
}

final class Session(c: Counters, protected val inc: Incarnation) extends Tracked {
  protected def counters: Counters = c

  def receive: Receive = { case Session.Route(to, line) =>
    to.tell(Conn.Deliver(line))
    c.routed.increment()
  }
}
