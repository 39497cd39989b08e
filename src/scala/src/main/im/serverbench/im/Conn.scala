package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.duration._

import serverbench.Rt.{Actor, ActorRef, ByteString, Props, Tcp, Terminated}

/** One im client connection (docs/im.md): the actor Akka IO's connection hands the bytes to.
  * It cuts lines (at most lineMaxBytes with CRLF; a longer one is answered 417 and dropped),
  * runs each command of the IRC subset, and takes Deliver from sessions, channels and peers.
  * What it sends goes through its send queue (SendQueue).
  *
  * A command whose answer comes from Channels (JOIN, PART, NICK's and QUIT's relays) is
  * answered by Replies messages, all from that one actor and so in order (an error numeric
  * of the same command goes through Channels too, as an Echo, to keep its place); until
  * they are in, further input waits unparsed, so every client sees its answers in the order
  * of its commands. Its mailbox is Akka's default, unbounded; other actors send to it
  * through its Proc, which counts the mailbox's length (chaos). When it ends, however (a
  * crash or chaos included), its parent, Sessions and Channels are told by DeathWatch and
  * clean up after it (Im.Listener, Sessions, Channels).
  *
  * Not split further: the commands share this actor's state and each is a few lines; the
  * wire format is Proto's, the shared actors Sessions' and Channels'. */
object Conn {
  final case class Deliver(line: ByteString) extends Counted
  /** Channels' answer to request `tag`: lines for this client and peers to relay to. */
  final case class Replies(tag: Int, lines: Vector[ByteString], peers: List[Proc]) extends Counted
  /** Sessions has routed an Open of this pair: direct sends may follow it. */
  final case class Opened(key: Sessions.Key) extends Counted
  private[im] final case class Ack(lines: Int) extends Tcp.Event
  private case object GiveUp

  final case class Shared(limits: Limits, sendqLines: Int, c: Counters, nicks: ConcurrentHashMap[String, Nick],
                          sessions: ConcurrentHashMap[Sessions.Key, Sessions.Entry], sessionsActor: ActorRef,
                          channels: ConcurrentHashMap[String, Proc], channelsActor: ActorRef)

  /** A claimed nick: its client, its shown form, whether that client registered. */
  final case class Nick(client: Proc, nick: String, registered: Boolean)

  val GraceMs = 1000L // how long the last line (ERROR ...) may take to leave

  /** A test hook (-Dserverbench.im.crash-command=true): the command CRASH throws in the
    * connection actor, to test the clean-up that does not depend on the actor itself. */
  val CrashHook: Boolean = java.lang.Boolean.getBoolean("serverbench.im.crash-command")

  def props(conn: ActorRef, s: Shared, me: Proc, inc: Incarnation): Props = Props(new Conn(conn, s, me, inc))
}

final class Conn(protected val conn: ActorRef, protected val s: Conn.Shared, me: Proc, protected val inc: Incarnation)
    extends Tracked with SendQueue {
  import Conn._

  protected def counters: Counters = s.c

  private val l = s.limits
  // reading
  private var buf = ByteString.empty
  private var discarding = false
  private var pending = Vector.empty[Proto.Item] // lines cut but not yet run (while waiting)
  private var readRequested = true // the listener asked for the first read (pull mode)
  // the client
  private var nick: String = null
  private var key: String = null
  private var user: String = null
  private var registered = false
  private val joined = scala.collection.mutable.HashMap.empty[String, String] // key -> name as joined
  // waiting for Replies: to which request (tag), how many, the peers gathered, what to do with them
  private var tag = 0
  private val opening = scala.collection.mutable.HashMap.empty[Sessions.Key, Int] // Opens not yet answered
  protected var awaiting = 0
  private var gathered = Set.empty[Proc]
  private var onAnswers: Set[Proc] => Unit = _ => ()
  protected var quitting = false
  private var connGone = false // the connection closed while leaving was still under way

  override def preStart(): Unit = context.watch(conn)

  def receive: Receive = {
    case Tcp.Received(data) =>
      val (items, rest, d) = Proto.split(buf ++ data, discarding, l.lineMaxBytes)
      buf = rest
      discarding = d
      pending ++= items
      readRequested = false
      runPending()
      resume()
    case Deliver(line) => send(line)
    case Opened(k) => opening.get(k).foreach(n => if (n > 1) opening(k) = n - 1 else opening.remove(k))
    case Replies(t, lines, peers) if t == tag && awaiting > 0 =>
      lines.foreach(send)
      gathered ++= peers
      awaiting -= 1
      if (awaiting == 0) {
        val f = onAnswers
        onAnswers = _ => ()
        f(gathered - me)
        gathered = Set.empty
        runPending()
        resume()
      }
    case Ack(n) => acked(n)
    case Tcp.CommandFailed(_: Tcp.Write) =>
      s.c.connectionErrors.increment()
      conn ! Tcp.Abort
    case Tcp.ErrorClosed(_) =>
      s.c.connectionErrors.increment()
      goodbye("Connection closed")
    case _: Replies => () // a request given up when the client left
    case _: Tcp.ConnectionClosed => gone()
    case Terminated(`conn`) => gone()
    case GiveUp => context.stop(self)
  }

  /** Pull mode: the next read only once what came is run (a client cannot send faster than
    * its commands are handled). */
  private def resume(): Unit =
    if (!readRequested && awaiting == 0 && !quitting && !over && pending.isEmpty) {
      readRequested = true
      conn ! Tcp.ResumeReading
    }

  // --- running lines ------------------------------------------------------------------
  private def runPending(): Unit =
    while (awaiting == 0 && !quitting && !over && pending.nonEmpty) {
      val item = pending.head
      pending = pending.tail
      item match {
        case Proto.TooLong =>
          s.c.badLines.increment()
          numeric(417, "Input line was too long")
        case Proto.Text(line) =>
          tag += 1
          Proto.parse(line) match {
            case None => s.c.badLines.increment()
            case Some(m) => if (!command(m)) s.c.badLines.increment()
          }
      }
    }

  /** Runs one command; false when it was answered with an error numeric. */
  private def command(m: Message): Boolean = m.command match {
    case "" | "PONG" => true
    case "NICK" => cmdNick(m.params)
    case "USER" => cmdUser(m.params)
    case "QUIT" =>
      send(ByteString("ERROR :Closing Link\r\n"))
      quit(m.params.headOption.filter(_.nonEmpty).getOrElse("Client Quit"))
      true
    case "PING" | "PRIVMSG" | "JOIN" | "PART" if !registered => numeric(451, "You have not registered")
    case "PING" =>
      if (m.params.isEmpty) numeric(409, "No origin specified")
      else { send(Proto.fromUser(l.serverName, "PONG", Seq(l.serverName), Some(m.params(0)))); true }
    case "PRIVMSG" => cmdPrivmsg(m.params)
    case "MEMORY" if registered => // outside RFC 2812: live memory after a full collection
      send(Proto.fromUser(l.serverName, "NOTICE", Seq(nick), Some(s"live_bytes ${s.c.measureLive()}")))
      true
    case "CRASH" if CrashHook => throw new IllegalStateException("CRASH (test hook)")
    case "JOIN" => cmdJoin(m.params)
    case "PART" => cmdPart(m.params)
    case _ if !registered => numeric(451, "You have not registered")
    case other => numeric(421, other, "Unknown command")
  }

  /** Sends a numeric addressed to this client; an error numeric's answer is false. */
  private def numeric(code: Int, params: String*): Boolean = {
    inTurn(Proto.numeric(code, Option(nick).getOrElse("*"), params, l))
    code < 400
  }

  /** A line of this command's answer: behind the command's requests to Channels, if any (an
    * Echo keeps its place), else at once. */
  private def inTurn(line: ByteString): Unit =
    if (awaiting == 0) send(line)
    else { awaiting += 1; s.channelsActor ! Channels.Echo(tag, me, Vector(line)) }

  private def prefix: String = s"$nick!$user@127.0.0.1"

  private def cmdNick(p: Vector[String]): Boolean = {
    val n = p.headOption.getOrElse("")
    if (n.isEmpty) return numeric(431, "No nickname given")
    if (!Proto.validNick(n, l)) return numeric(432, n, "Erroneous nickname")
    val k = Proto.fold(n)
    val mine = Nick(me, n, registered)
    val claimed =
      if (k == key) { s.nicks.put(k, mine); true }
      else PeerState.claim(s.nicks, k, mine) // free, or its holder's client already gone
    if (!claimed) return numeric(433, n, "Nickname is already in use")
    if (key != null && key != k) s.nicks.remove(key, Nick(me, nick, registered))
    me.nickKey = k
    if (!registered) {
      nick = n
      key = k
      tryRegister()
    } else {
      val line = Proto.fromUser(prefix, "NICK", Nil, Some(n))
      if (key != k) s.sessionsActor ! Sessions.LeaveAll(me) // they are keyed by the old nick
      nick = n
      key = k
      send(line)
      gather(joined.nonEmpty, t => s.channelsActor ! Channels.Renamed(t, me, n, prefix)) { peers =>
        peers.foreach(_.tell(Deliver(line)))
      }
    }
    true
  }

  private def cmdUser(p: Vector[String]): Boolean =
    if (registered) numeric(462, "You may not reregister")
    else if (p.size < 4) numeric(461, "USER", "Not enough parameters")
    else { user = p(0); tryRegister(); true }

  private def tryRegister(): Unit = if (nick != null && user != null) {
    s.nicks.put(key, Nick(me, nick, registered = true))
    registered = true
    s.c.registered()
    numeric(1, s"Welcome to the serverbench IRC network $prefix")
  }

  private def cmdPrivmsg(p: Vector[String]): Boolean =
    if (p.isEmpty || p(0).isEmpty) numeric(411, "No recipient given (PRIVMSG)")
    else if (p.size < 2 || p(1).isEmpty) numeric(412, "No text to send")
    else p(0).split(',').toSeq.map(t => privmsgOne(t, p(1))).forall(identity)

  private def privmsgOne(target: String, text: String): Boolean = {
    val k = Proto.fold(target)
    if (target.startsWith("#")) joined.get(k) match {
      case Some(shown) =>
        val ch = s.channels.get(k) // the registry's: a channel chaos replaced is reached in its successor
        if (ch != null) ch.tell(Channel.Msg(me, Proto.fromUser(prefix, "PRIVMSG", Seq(shown), Some(text))))
        true
      case None =>
        if (s.channels.containsKey(k)) numeric(404, target, "Cannot send to channel")
        else numeric(403, target, "No such channel")
    }
    else s.nicks.get(k) match {
      case Nick(to, shown, true) =>
        val line = Proto.fromUser(prefix, "PRIVMSG", Seq(shown), Some(text))
        val pair = Sessions.key(key, k)
        val e = s.sessions.get(pair)
        // through Sessions while an Open of this pair is on its way there: a direct send could
        // overtake it (this client's PRIVMSGs to one nick stay in order)
        if (e != null && e.joins(me, to) && !opening.contains(pair)) e.session.tell(Session.Route(to, line))
        else {
          opening(pair) = opening.getOrElse(pair, 0) + 1
          s.sessionsActor ! Sessions.Open(pair, me, to, line)
        }
        true
      case _ => numeric(401, target, "No such nick/channel")
    }
  }

  private def cmdJoin(p: Vector[String]): Boolean =
    if (p.isEmpty || p(0).isEmpty) numeric(461, "JOIN", "Not enough parameters")
    else p(0).split(',').toSeq.map { name =>
      val k = Proto.fold(name)
      if (!Proto.validChannel(name, l)) numeric(403, name, "No such channel")
      else {
        if (!joined.contains(k)) {
          joined(k) = name
          awaiting += 1
          s.channelsActor ! Channels.Join(tag, k, name, me, nick, prefix)
        }
        true
      }
    }.forall(identity)

  private def cmdPart(p: Vector[String]): Boolean =
    if (p.isEmpty || p(0).isEmpty) numeric(461, "PART", "Not enough parameters")
    else p(0).split(',').toSeq.map { name =>
      val k = Proto.fold(name)
      joined.remove(k) match {
        case Some(shown) =>
          awaiting += 1
          s.channelsActor ! Channels.Part(tag, k, me, Proto.fromUser(prefix, "PART", Seq(shown), p.lift(1)))
          true
        case None =>
          if (s.channels.containsKey(k)) numeric(442, name, "You're not on that channel")
          else numeric(403, name, "No such channel")
      }
    }.forall(identity)

  /** Asks Channels (ask, with the request's tag) if need be; then f with the peers gathered. */
  private def gather(need: Boolean, ask: Int => Unit)(f: Set[Proc] => Unit): Unit =
    if (!need) f(Set.empty)
    else {
      awaiting += 1
      onAnswers = f
      ask(tag)
    }

  // --- leaving ------------------------------------------------------------------------
  private def quit(reason: String): Unit = {
    quitting = true
    leave(reason, () => if (connGone) context.stop(self) else flush())
  }

  /** The connection closed. While leaving, the channels' answers still relay the QUIT to
    * their members (stopping at once would drop it); then stop. */
  private def gone(): Unit =
    if (!quitting) goodbye("Connection closed")
    else if (awaiting == 0) context.stop(self)
    else if (!connGone) {
      connGone = true
      context.system.scheduler.scheduleOnce(GraceMs.millis, self, GiveUp)(context.dispatcher)
    }

  protected def goodbye(reason: String): Unit =
    if (!quitting) {
      quitting = true
      leave(reason, () => context.stop(self))
      context.system.scheduler.scheduleOnce(GraceMs.millis, self, GiveUp)(context.dispatcher)
    }

  /** Out of every session, channel (relaying the QUIT to the channels' members) and the nick
    * registry; then done. The nick goes first: a client that reconnects at once finds it free. */
  private def leave(reason: String, done: () => Unit): Unit = {
    if (key != null) s.nicks.remove(key, Nick(me, nick, registered))
    if (registered) {
      s.c.registeredNow.decrementAndGet()
      s.sessionsActor ! Sessions.LeaveAll(me)
      val line = Proto.fromUser(prefix, "QUIT", Nil, Some(reason))
      val any = joined.nonEmpty
      joined.clear()
      registered = false
      tag += 1 // answers to a request still open are dropped
      gathered = Set.empty
      awaiting = 0
      gather(any, t => s.channelsActor ! Channels.LeaveAll(t, me)) { peers =>
        peers.foreach(_.tell(Deliver(line)))
        done()
      }
    } else done()
  }

  /** However it ended (a crash or chaos included; Im.Listener, Sessions and Channels clean
    * up the rest from their DeathWatch). A victim of chaos also loses its send queue. */
  override def postStop(): Unit = {
    dropMailbox()
    if (inc.killed) s.c.chaosDropped.add(queue.size.toLong)
    if (registered) s.c.registeredNow.decrementAndGet()
    s.c.closed()
    if (key != null) s.nicks.remove(key, Nick(me, nick, registered))
  }
}
