package serverbench.im

import java.net.InetSocketAddress
import java.util.concurrent.{ConcurrentHashMap, TimeoutException}

import scala.concurrent.{Await, ExecutionContext, Promise}
import scala.concurrent.duration._

import com.typesafe.config.{ConfigFactory, ConfigParseOptions, ConfigSyntax}

import serverbench.{Cli, Json, Lifecycle, Main, Outcome, RunFailure}
import serverbench.Rt.{Actor, ActorRef, ActorSystem, ByteString, IO, Props, SupervisorStrategy, Tcp, Terminated}

/** The im benchmark's server for scala_akka and scala_pekko (docs/im.md): an IRC-subset
  * instant-messaging server over the actor runtime's classic TCP (Rt.Tcp: Akka IO or Pekko
  * IO), an actor per connection (Conn), a session actor per conversation (Sessions) and an
  * actor per channel (Channels), sessions and channels supervised and, with
  * --chaos-interval-ms T, one process of --chaos-target killed every T ms (Chaos). Every
  * mailbox is Akka's default, unbounded (docs/im.md: one mailbox policy); the only
  * push-back is each connection's send queue. Lifecycle as the other socket servers: bind 127.0.0.1, one
  * listening line, stop on stdin EOF / "stop" / SIGTERM / idle timeout, one record. */
object Im {
  val Host = "127.0.0.1"
  val Backlog = 4096 // the kernel caps it at net.core.somaxconn
  val StopGraceMs = 5000L
  val BindWait: FiniteDuration = 30.seconds

  /** The wire format's limits, from spec/cli.json's benchmarks.im (in the jar). */
  def limits(): Limits = {
    val json = ConfigParseOptions.defaults.setSyntax(ConfigSyntax.JSON).setAllowMissing(false)
    val im = ConfigFactory.parseResources(Cli.Spec.Resource, json).getConfig("benchmarks.im")
    Limits(im.getString("server_name"), im.getInt("line_max_bytes"), im.getInt("nick_max_chars"),
      im.getInt("channel_max_chars"))
  }

  private case object StartAccepting
  private case object Shutdown

  final class Listener(port: Int, shared: Conn.Shared, bound: Promise[InetSocketAddress], live: Chaos.Live)
      extends Actor {
    private var tcpListener: Option[ActorRef] = None
    private var stopping = false
    private val procs = scala.collection.mutable.HashMap.empty[ActorRef, Proc]

    // A connection actor that throws is stopped (its connection with it), never restarted.
    override val supervisorStrategy: SupervisorStrategy = SupervisorStrategy.stoppingStrategy

    override def preStart(): Unit =
      IO(Tcp)(context.system) ! Tcp.Bind(self, new InetSocketAddress(Host, port), Backlog, Nil, pullMode = true)

    def receive: Receive = {
      case Tcp.Bound(local) =>
        tcpListener = Some(sender())
        bound.trySuccess(local)
      case StartAccepting => tcpListener.foreach(_ ! Tcp.ResumeAccepting(Int.MaxValue))
      case f @ Tcp.CommandFailed(_: Tcp.Bind) =>
        val why = f.cause.map(e => Option(e.getMessage).getOrElse(e.toString)).getOrElse("bind failed")
        bound.tryFailure(new RunFailure(s"cannot listen on $Host port $port: $why"))
        context.stop(self)
      case Tcp.Connected(remote, local) =>
        val conn = sender()
        shared.c.accepted.increment()
        if (stopping) conn ! Tcp.Abort
        else {
          shared.c.open.incrementAndGet()
          val p = new Proc(Chaos.ConnectionKind, shared.c)
          p.tcp = conn
          p.localPort = local.getPort
          p.remotePort = remote.getPort
          p.start(i => context.actorOf(Conn.props(conn, shared, p, i)))
          val h = p.cur.ref
          context.watch(h)
          procs(h) = p
          live.procs.add(p)
          // pull mode: Conn asks for each next read once it has run what came
          conn ! Tcp.Register(h, keepOpenOnPeerClosed = false, useResumeWriting = false)
          conn ! Tcp.ResumeReading
        }
      case Terminated(h) => // however the connection's actor ended: its nick is free
        procs.remove(h).foreach { p =>
          live.procs.remove(p)
          freeNick(shared)(p)
        }
      case Shutdown =>
        stopping = true
        tcpListener.foreach(_ ! Tcp.Unbind)
        context.children.foreach(context.stop)
      case Tcp.Unbound => ()
    }

  }

  /** A connection's nick, free (if it still holds it): at once when chaos kills it. */
  def freeNick(shared: Conn.Shared)(p: Proc): Unit = {
    val k = p.nickKey
    if (k != null) shared.nicks.computeIfPresent(k, (_, n) => if (n.client eq p) null else n)
  }

  /** The wire format's code run once before the listening line: the first clients of a cold
    * JVM otherwise wait for its class loading (~100 ms each for the first few), which a run
    * with chaos every T ms would see as its victims' slowness. Touches no counter. */
  private def warmUp(l: Limits): Unit = {
    val (items, _, _) = Proto.split(ByteString("NICK a\r\nUSER u 0 * :x\r\n"), false, l.lineMaxBytes)
    items.foreach { case Proto.Text(t) => Proto.parse(t); case _ => () }
    Proto.numeric(1, "a", Seq("Welcome"), l)
    Proto.fromUser("a!u@127.0.0.1", "PRIVMSG", Seq("b"), Some("x"))
    Proto.validNick("a", l)
  }

  def run(system: ActorSystem, r: Cli.Run, io: Main.Io): Outcome = {
    val p = r.params
    val (port, idleS, sendq, chaosMs, seed) =
      (p.int("port"), p.double("idle_timeout_s"), p.int("sendq_lines"), p.int("chaos_interval_ms"), p.long("seed"))
    val (target, pick) = (p.str("chaos_target"), p.str("chaos_pick"))
    val c = new Counters
    val sessions = new ConcurrentHashMap[Sessions.Key, Sessions.Entry]
    val channels = new ConcurrentHashMap[String, Proc]
    val live = Map[Chaos.Kind, Chaos.Live](Chaos.SessionKind -> new Chaos.Live, Chaos.ChannelKind -> new Chaos.Live,
      Chaos.ConnectionKind -> new Chaos.Live)
    val lim = limits()
    val kinds = Chaos.kinds(target)
    val shared = Conn.Shared(lim, sendq, c, new ConcurrentHashMap[String, Conn.Nick], sessions,
      system.actorOf(Sessions.props(sessions, c, live(Chaos.SessionKind)), "im-sessions"), channels,
      system.actorOf(Channels.props(channels, c, lim, live(Chaos.ChannelKind)), "im-channels"))
    val bound = Promise[InetSocketAddress]()
    val listener = system.actorOf(Props(new Listener(port, shared, bound, live(Chaos.ConnectionKind))), "im-listener")
    if (chaosMs > 0) {
      val sups = Map[Chaos.Kind, ActorRef](Chaos.SessionKind -> shared.sessionsActor,
        Chaos.ChannelKind -> shared.channelsActor, Chaos.ConnectionKind -> listener)
      val monkey = new Chaos.Monkey(new Chaos.Draw(chaosMs, seed, pick == "queued", kinds.map(live)), system, c, live,
        sups, freeNick(shared))
      // parasitic: run on the scheduler's own thread, not queued behind the busy dispatcher
      system.scheduler.scheduleWithFixedDelay(chaosMs.millis, chaosMs.millis)(monkey)(ExecutionContext.parasitic)
    }
    val local =
      try Await.result(bound.future, BindWait)
      catch { case _: TimeoutException => throw new RunFailure(s"not bound to $Host port $port within ${BindWait.toSeconds} s") }
    warmUp(lim)
    val t0 = System.nanoTime()
    c.idleSinceNs = t0
    io.out.println(s"""{"event":"listening","benchmark":"im","role":"server","language":"${Main.Language}","address":"$Host","port":${local.getPort}}""")
    io.out.flush()
    listener ! StartAccepting

    val idleNs = (idleS * 1e9).toLong
    val reason = Lifecycle.awaitStop(io.in, () => system.whenTerminated.isCompleted,
      () => c.open.get == 0 && System.nanoTime() - c.idleSinceNs >= idleNs)
    listener ! Shutdown
    val graceEnd = System.nanoTime() + StopGraceMs * 1000000L
    while (c.open.get > 0 && System.nanoTime() < graceEnd) Thread.sleep(10)
    val secs = (System.nanoTime() - t0) / 1e9
    def n(a: java.util.concurrent.atomic.LongAdder): Json.Value = Json.Int(a.sum)
    Outcome(
      params = Json.Obj("port" -> Json.Int(port.toLong), "idle_timeout_s" -> Json.Num(idleS),
        "sendq_lines" -> Json.Int(sendq.toLong), "chaos_interval_ms" -> Json.Int(chaosMs.toLong),
        "chaos_target" -> Json.Str(target), "chaos_pick" -> Json.Str(pick), "seed" -> Json.Int(seed)),
      metrics = Json.Obj(
        "elapsed_s" -> Json.Num(secs),
        "port" -> Json.Int(local.getPort.toLong),
        "connections_accepted" -> n(c.accepted),
        "clients_registered_max" -> Json.Int(c.registeredMax.get),
        "messages_routed" -> n(c.routed),
        "channel_deliveries" -> n(c.channelDeliveries),
        "sessions_started" -> n(c.sessionsStarted),
        "sessions_killed" -> n(c.sessionsKilled),
        "sessions_restarted" -> n(c.sessionsRestarted),
        "channels_killed" -> n(c.channelsKilled),
        "channels_restarted" -> n(c.channelsRestarted),
        "connections_killed" -> n(c.connectionsKilled),
        "chaos_dropped_messages" -> n(c.chaosDropped),
        "live_bytes" -> (if (c.liveBytes.get < 0) Json.Null else Json.Int(c.liveBytes.get)),
        "sendq_disconnects" -> n(c.sendqDisconnects),
        "bad_lines" -> n(c.badLines),
        "connection_errors" -> n(c.connectionErrors),
        "stop_reason" -> Json.Str(reason)),
      validation = Json.Obj("ok" -> Json.Bool(true), "reason" -> Json.Null),
      ok = true)
  }
}
