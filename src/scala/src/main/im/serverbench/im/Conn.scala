package serverbench.im

import java.util.concurrent.ConcurrentHashMap

import scala.concurrent.duration._

import serverbench.Rt.{Actor, ActorRef, ByteString, Props, Tcp, Terminated}

/** One im client connection (docs/im.md): the actor Akka IO's connection hands the bytes to.
  * It cuts lines (at most lineMaxBytes with CRLF; a longer one is answered 417 and dropped),
  * runs each command of the IRC subset, and takes Deliver from sessions, channels and peers.
  * What it sends goes through a bounded queue (--sendq-lines, counted until Akka IO
  * acknowledges the write) with one Write outstanding; a client whose queue fills is
  * disconnected ("ERROR :SendQ exceeded", counted): the stated policy, as ircds do.
  *
  * A command whose answer comes from channels (JOIN, PART, NICK's and QUIT's relays) is
  * answered by Replies messages; until they are in, further input waits unparsed, so every
  * client sees its answers in the order of its commands.
  *
  * Not split further: the commands share this actor's state and each is a few lines; the
  * wire format is Proto's, the shared actors Sessions' and Channels'. */
object Conn {
  final case class Deliver(line: ByteString)
  /** A channel's answer to request `tag`: lines for this client, peers to relay to, and (a
    * JOIN's answer) the channel joined, by its key. */
  final case class Replies(tag: Int, lines: Vector[ByteString], peers: List[ActorRef],
                           channel: Option[(String, ActorRef)] = None)
  private final case class Ack(lines: Int) extends Tcp.Event
  private case object GiveUp

  final case class Shared(limits: Limits, sendqLines: Int, c: Counters, nicks: ConcurrentHashMap[String, Nick],
                          sessions: ConcurrentHashMap[Sessions.Key, Sessions.Entry], sessionsActor: ActorRef,
                          channels: ConcurrentHashMap[String, ActorRef], channelsActor: ActorRef)

  /** A claimed nick: its client, its shown form, whether that client registered. */
  final case class Nick(client: ActorRef, nick: String, registered: Boolean)

  val GraceMs = 1000L // how long the last line (ERROR ...) may take to leave

  def props(conn: ActorRef, s: Shared): Props = Props(new Conn(conn, s))
}

final class Conn(conn: ActorRef, s: Conn.Shared) extends Actor {
  import Conn._

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
  private val joined = scala.collection.mutable.HashMap.empty[String, (ActorRef, String)] // key -> (channel, name)
  // waiting for Replies: to which request (tag), how many, the peers gathered, what to do with them
  private var tag = 0
  private var awaiting = 0
  private var gathered = Set.empty[ActorRef]
  private var onAnswers: Set[ActorRef] => Unit = _ => ()
  // writing
  private var queue = Vector.empty[ByteString]
  private var queued = 0 // lines queued or in the outstanding Write
  private var inFlight = 0
  private var over = false
  private var quitting = false
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
    case Replies(t, lines, peers, channel) if t == tag && awaiting > 0 =>
      lines.foreach(send)
      gathered ++= peers
      channel.foreach { case (k, ch) => joined.get(k).foreach { case (_, name) => joined(k) = (ch, name) } }
      awaiting -= 1
      if (awaiting == 0) {
        val f = onAnswers
        onAnswers = _ => ()
        f(gathered - self)
        gathered = Set.empty
        runPending()
        resume()
      }
    case Ack(n) =>
      queued -= n
      inFlight = 0
      flush()
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

  // --- the bounded send queue --------------------------------------------------------
  private def send(line: ByteString): Unit =
    if (!over) {
      if (queued >= s.sendqLines) overflow()
      else {
        queue :+= line
        queued += 1
        flush()
      }
    }

  private def flush(): Unit =
    if (inFlight == 0 && queue.nonEmpty) {
      inFlight = queue.size
      conn ! Tcp.Write(queue.reduce(_ ++ _), Ack(inFlight))
      queue = Vector.empty
    } else if (inFlight == 0 && quitting && awaiting == 0) conn ! Tcp.Close // QUIT relayed first

  private def overflow(): Unit = {
    over = true
    s.c.sendqDisconnects.increment()
    queue = Vector.empty
    if (inFlight == 0) conn ! Tcp.Write(ByteString("ERROR :SendQ exceeded\r\n"))
    conn ! Tcp.Close // after the outstanding Write, if the client ever reads it
    context.system.scheduler.scheduleOnce(GraceMs.millis, conn, Tcp.Abort)(context.dispatcher)
    goodbye("SendQ exceeded")
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
    case "JOIN" => cmdJoin(m.params)
    case "PART" => cmdPart(m.params)
    case _ if !registered => numeric(451, "You have not registered")
    case other => numeric(421, other, "Unknown command")
  }

  /** Sends a numeric addressed to this client; an error numeric's answer is false. */
  private def numeric(code: Int, params: String*): Boolean = {
    send(Proto.numeric(code, Option(nick).getOrElse("*"), params, l))
    code < 400
  }

  private def prefix: String = s"$nick!$user@127.0.0.1"

  private def cmdNick(p: Vector[String]): Boolean = {
    val n = p.headOption.getOrElse("")
    if (n.isEmpty) return numeric(431, "No nickname given")
    if (!Proto.validNick(n, l)) return numeric(432, n, "Erroneous nickname")
    val k = Proto.fold(n)
    val mine = Nick(self, n, registered)
    val claimed =
      if (k == key) { s.nicks.put(k, mine); true }
      else s.nicks.putIfAbsent(k, mine) == null
    if (!claimed) return numeric(433, n, "Nickname is already in use")
    if (key != null && key != k) s.nicks.remove(key, Nick(self, nick, registered))
    if (!registered) {
      nick = n
      key = k
      tryRegister()
    } else {
      val line = Proto.fromUser(prefix, "NICK", Nil, Some(n))
      if (key != k) s.sessionsActor ! Sessions.LeaveAll(self) // they are keyed by the old nick
      nick = n
      key = k
      send(line)
      val chans = joined.values.map(_._1).toSeq
      gather(chans.size, t => chans.foreach(_ ! Channel.Renamed(t, self, n))) { peers =>
        peers.foreach(_ ! Deliver(line))
      }
    }
    true
  }

  private def cmdUser(p: Vector[String]): Boolean =
    if (registered) numeric(462, "You may not reregister")
    else if (p.size < 4) numeric(461, "USER", "Not enough parameters")
    else { user = p(0); tryRegister(); true }

  private def tryRegister(): Unit = if (nick != null && user != null) {
    s.nicks.put(key, Nick(self, nick, registered = true))
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
      case Some((ch, shown)) => ch ! Channel.Msg(self, Proto.fromUser(prefix, "PRIVMSG", Seq(shown), Some(text))); true
      case None =>
        if (s.channels.containsKey(k)) numeric(404, target, "Cannot send to channel")
        else numeric(403, target, "No such channel")
    }
    else s.nicks.get(k) match {
      case Nick(to, shown, true) =>
        val line = Proto.fromUser(prefix, "PRIVMSG", Seq(shown), Some(text))
        val pair = Sessions.key(key, k)
        val e = s.sessions.get(pair)
        if (e != null && e.joins(self, to)) e.session ! Session.Route(to, line)
        else s.sessionsActor ! Sessions.Open(pair, self, to, line)
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
          joined(k) = (null, name) // the channel's actor arrives with its answer
          awaiting += 1
          s.channelsActor ! Channels.Join(tag, k, name, self, nick, prefix)
        }
        true
      }
    }.forall(identity)

  private def cmdPart(p: Vector[String]): Boolean =
    if (p.isEmpty || p(0).isEmpty) numeric(461, "PART", "Not enough parameters")
    else p(0).split(',').toSeq.map { name =>
      val k = Proto.fold(name)
      joined.remove(k) match {
        case Some((_, shown)) =>
          awaiting += 1
          s.channelsActor ! Channels.Part(tag, k, self, Proto.fromUser(prefix, "PART", Seq(shown), p.lift(1)))
          true
        case None =>
          if (s.channels.containsKey(k)) numeric(442, name, "You're not on that channel")
          else numeric(403, name, "No such channel")
      }
    }.forall(identity)

  /** Asks each of n channels (ask, with the request's tag) for its answer; then f with the
    * peers gathered. */
  private def gather(n: Int, ask: Int => Unit)(f: Set[ActorRef] => Unit): Unit =
    if (n == 0) f(Set.empty)
    else {
      awaiting += n
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

  private def goodbye(reason: String): Unit =
    if (!quitting) {
      quitting = true
      leave(reason, () => context.stop(self))
      context.system.scheduler.scheduleOnce(GraceMs.millis, self, GiveUp)(context.dispatcher)
    }

  /** Out of every session, channel (relaying the QUIT to the channels' members) and the nick
    * registry; then done. */
  private def leave(reason: String, done: () => Unit): Unit = {
    if (key != null) s.nicks.remove(key, Nick(self, nick, registered))
    if (registered) {
      s.c.registeredNow.decrementAndGet()
      s.sessionsActor ! Sessions.LeaveAll(self)
      val line = Proto.fromUser(prefix, "QUIT", Nil, Some(reason))
      val keys = joined.keys.toSeq
      joined.clear()
      registered = false
      tag += 1 // answers to a request still open are dropped
      gathered = Set.empty
      awaiting = 0
      gather(keys.size, t => keys.foreach(k => s.channelsActor ! Channels.Leave(t, k, self))) { peers =>
        peers.foreach(_ ! Deliver(line))
        done()
      }
    } else done()
  }

  override def postStop(): Unit = {
    s.c.closed()
    if (key != null) s.nicks.remove(key, Nick(self, nick, registered))
  }
}
