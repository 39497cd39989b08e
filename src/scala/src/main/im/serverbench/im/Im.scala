package serverbench.im

import java.net.InetSocketAddress
import java.util.concurrent.{ConcurrentHashMap, TimeoutException}

import scala.concurrent.{Await, Promise}
import scala.concurrent.duration._

import com.typesafe.config.{ConfigFactory, ConfigParseOptions, ConfigSyntax}

import serverbench.{Cli, Json, Lifecycle, Main, Outcome, RunFailure}
import serverbench.Rt.{Actor, ActorRef, ActorSystem, IO, Props, SupervisorStrategy, Tcp}

/** The im benchmark's server for scala_akka and scala_pekko (docs/im.md): an IRC-subset
  * instant-messaging server over the actor runtime's classic TCP (Rt.Tcp: Akka IO or Pekko
  * IO), an actor per connection (Conn), a session actor per conversation (Sessions) and an
  * actor per channel (Channels), the sessions supervised and, with --chaos-interval-ms T,
  * one killed every T ms. Lifecycle as the other socket servers: bind 127.0.0.1, one
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

  final class Listener(port: Int, shared: Conn.Shared, bound: Promise[InetSocketAddress]) extends Actor {
    private var tcpListener: Option[ActorRef] = None
    private var stopping = false

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
      case Tcp.Connected(_, _) =>
        val conn = sender()
        shared.c.accepted.increment()
        if (stopping) conn ! Tcp.Abort
        else {
          shared.c.open.incrementAndGet()
          val h = context.actorOf(Conn.props(conn, shared))
          // pull mode: Conn asks for each next read once it has run what came
          conn ! Tcp.Register(h, keepOpenOnPeerClosed = false, useResumeWriting = false)
          conn ! Tcp.ResumeReading
        }
      case Shutdown =>
        stopping = true
        tcpListener.foreach(_ ! Tcp.Unbind)
        context.children.foreach(context.stop)
      case Tcp.Unbound => ()
    }
  }

  def run(system: ActorSystem, r: Cli.Run, io: Main.Io): Outcome = {
    val p = r.params
    val (port, idleS, sendq, chaosMs, seed) =
      (p.int("port"), p.double("idle_timeout_s"), p.int("sendq_lines"), p.int("chaos_interval_ms"), p.long("seed"))
    val c = new Counters
    val sessions = new ConcurrentHashMap[Sessions.Key, Sessions.Entry]
    val channels = new ConcurrentHashMap[String, ActorRef]
    val lim = limits()
    val shared = Conn.Shared(lim, sendq, c, new ConcurrentHashMap[String, Conn.Nick], sessions,
      system.actorOf(Sessions.props(sessions, c, chaosMs, seed), "im-sessions"), channels,
      system.actorOf(Channels.props(channels, c, lim), "im-channels"))
    val bound = Promise[InetSocketAddress]()
    val listener = system.actorOf(Props(new Listener(port, shared, bound)), "im-listener")
    val local =
      try Await.result(bound.future, BindWait)
      catch { case _: TimeoutException => throw new RunFailure(s"not bound to $Host port $port within ${BindWait.toSeconds} s") }
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
        "sendq_lines" -> Json.Int(sendq.toLong), "chaos_interval_ms" -> Json.Int(chaosMs.toLong), "seed" -> Json.Int(seed)),
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
        "sendq_disconnects" -> n(c.sendqDisconnects),
        "bad_lines" -> n(c.badLines),
        "connection_errors" -> n(c.connectionErrors),
        "stop_reason" -> Json.Str(reason)),
      validation = Json.Obj("ok" -> Json.Bool(true), "reason" -> Json.Null),
      ok = true)
  }
}
