package serverbench

import java.net.InetSocketAddress
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.{AtomicLong, LongAdder}

import scala.concurrent.{Await, Promise}
import scala.concurrent.duration._

import akka.actor.{Actor, ActorRef, ActorSystem, Props, SupervisorStrategy, Terminated}
import akka.event.{DefaultLoggingFilter, EventStream}
import akka.io.{IO, Tcp}
import akka.pattern.gracefulStop

/** echo_flood server for scala_akka (docs/sockets.md, docs/sockets.md):
  * Akka IO TCP (classic, akka.io.{IO, Tcp}), one actor per connection. A listener actor
  * binds 127.0.0.1 (backlog 4,096 as the C and Erlang servers; the kernel caps it at
  * net.core.somaxconn), accepts everything queued whenever the socket is acceptable, and
  * for every Tcp.Connected starts a Handler and registers it with the connection; the
  * handler writes every Tcp.Received back with Tcp.Write. The listener has a one-thread
  * dispatcher of its own (application.conf), the handlers and Akka's TCP actors the
  * default one (C threads).
  *
  * Back-pressure: ACK-based writes with pull-mode reading (Bind(pullMode = true)). A
  * handler has at most one Write outstanding (Write(data, Ack)) and asks for the next read
  * (Tcp.ResumeReading) only when that write's Ack has come back, i.e. when the bytes are in
  * the kernel. Akka reads at most one buffer (akka.io.tcp.direct-buffer-size, 32 KiB in
  * application.conf) per ResumeReading, so a connection holds at most one chunk in the
  * server however slowly its peer reads: a slow reader fills its socket buffers and then
  * simply is not read from (TCP flow control pushes back on the sender). No NACK /
  * ResumeWriting protocol (Register(useResumeWriting = false)).
  *
  * Lifecycle as the other servers: one listening line once bound (before any connection
  * is accepted), stop on stdin EOF, the line `stop`, SIGTERM/SIGINT or after
  * --idle-timeout-s with no open connection; then the handlers are told to close (each
  * first waits for its outstanding write's Ack, so bytes_written is exact), the listener is
  * stopped, and Main prints ONE record with the counters. bytes_written = bytes echoed
  * (counted when their Ack arrives). */
object EchoFlood {
  val Host = "127.0.0.1"
  val Backlog = 4096
  val StopGraceMs = 5000L
  val BindWait: FiniteDuration = 30.seconds
  /** The listener's own one-thread dispatcher (application.conf says why). */
  val ListenerDispatcher = "serverbench.echo-flood-listener-dispatcher"

  /** Shared by every actor of one run; LongAdders because thousands of handlers add. */
  final class Counters {
    val bytesRead, bytesWritten, accepted, errors = new LongAdder
    val open = new AtomicLong
    @volatile var idleSinceNs: Long = System.nanoTime()
    def closed(): Unit = if (open.decrementAndGet() == 0) idleSinceNs = System.nanoTime()
  }

  /** Set until the listener is bound: lets BindFailureLogFilter drop Akka's own
    * stack-trace log of a failed bind (the run prints its one `error:` line instead). */
  @volatile private[serverbench] var binding = false

  case object StartAccepting
  case object Shutdown
  private case object Ack extends Tcp.Event
  private case object Close
  private case object ConnectionGone

  final class Listener(port: Int, c: Counters, bound: Promise[InetSocketAddress]) extends Actor {
    private var tcpListener: Option[ActorRef] = None
    private var stopping = false

    // A handler that throws is stopped (its connection with it), never restarted.
    override val supervisorStrategy: SupervisorStrategy = SupervisorStrategy.stoppingStrategy

    override def preStart(): Unit =
      IO(Tcp)(context.system) ! Tcp.Bind(self, new InetSocketAddress(Host, port), Backlog, Nil, pullMode = true)

    def receive: Receive = {
      case Tcp.Bound(local) =>
        tcpListener = Some(sender())
        bound.trySuccess(local)

      case StartAccepting => // sent once the listening line is out
        // Bind(pullMode = true) is for the connections' reads; accepting is not throttled:
        // each time the socket is acceptable Akka accepts everything the kernel has queued
        // (as the C server's accept loop), so that the accept queue does not overflow while
        // thousands of connections arrive at once (an overflowing queue makes the kernel
        // send SYN cookies, and a client's data segment that then fails the cookie check is
        // answered with a reset).
        tcpListener.foreach(_ ! Tcp.ResumeAccepting(Int.MaxValue))

      case f @ Tcp.CommandFailed(_: Tcp.Bind) =>
        val why = f.cause.map(e => Option(e.getMessage).getOrElse(e.toString)).getOrElse("bind failed")
        bound.tryFailure(new RunFailure(s"cannot listen on $Host port $port: $why"))
        context.stop(self)

      case Tcp.Connected(_, _) =>
        val conn = sender()
        c.accepted.increment()
        if (stopping) conn ! Tcp.Abort
        else {
          c.open.incrementAndGet()
          val h = context.actorOf(handlerProps(conn, c))
          // Same sender, so the connection sees Register before ResumeReading: its first
          // read happens only once the handler is registered.
          conn ! Tcp.Register(h, keepOpenOnPeerClosed = false, useResumeWriting = false)
          conn ! Tcp.ResumeReading
        }

      case Shutdown =>
        stopping = true
        tcpListener.foreach(_ ! Tcp.Unbind)
        context.children.foreach(_ ! Close)

      case Tcp.Unbound => ()
    }
  }

  private def handlerProps(conn: ActorRef, c: Counters): Props = Props(new Handler(conn, c))

  /** One connection. State: the connection, whether a Write is out and how many bytes it
    * carries, (only if Akka ever delivers a read while a write is out) those bytes, and
    * whether the server asked it to close. Told to close with a write out, it waits for that
    * write's Ack: the client may already have read those bytes, and bytes_written counts
    * them only when the Ack arrives (the run waits up to StopGraceMs for every handler). */
  final class Handler(conn: ActorRef, c: Counters) extends Actor {
    private var inFlight = -1 // bytes of the outstanding Write; -1: none
    private var queued: akka.util.ByteString = akka.util.ByteString.empty
    private var closedSeen = false
    private var closing = false

    override def preStart(): Unit = context.watch(conn)

    private def write(data: akka.util.ByteString): Unit = {
      inFlight = data.length
      conn ! Tcp.Write(data, Ack)
    }

    def receive: Receive = {
      case Tcp.Received(data) =>
        c.bytesRead.add(data.length.toLong)
        // In pull mode a read comes only after our ResumeReading, i.e. with no write out;
        // should one come anyway, it waits here (bounded by that same rule).
        if (inFlight >= 0) queued = queued ++ data else write(data)

      case Ack =>
        c.bytesWritten.add(inFlight.toLong)
        inFlight = -1
        if (queued.nonEmpty) {
          val d = queued
          queued = akka.util.ByteString.empty
          write(d)
        } else if (closing) context.stop(self)
        else conn ! Tcp.ResumeReading

      case Tcp.CommandFailed(_: Tcp.Write) =>
        c.errors.increment()
        conn ! Tcp.Abort
        context.stop(self)

      case Tcp.ErrorClosed(_) =>
        closedSeen = true
        c.errors.increment()
        context.stop(self)

      case _: Tcp.ConnectionClosed => // PeerClosed (the client is done), or our own Abort
        closedSeen = true
        context.stop(self)

      case Close => // the server stops; the connection aborts with us
        closing = true
        if (inFlight < 0) context.stop(self)

      // The connection's closed event, if any, was queued before its Terminated arrived
      // (a system message that overtakes it); look again after what is queued.
      case Terminated(`conn`) => self ! ConnectionGone
      case ConnectionGone =>
        if (!closedSeen) c.errors.increment() // the connection actor died without a reason
        context.stop(self)
    }

    override def postStop(): Unit = c.closed()
  }

  def run(system: ActorSystem, r: Cli.Run, io: Main.Io): Outcome = {
    val port = r.params.int("port")
    val idleS = r.params.double("idle_timeout_s")
    val idleNs = (idleS * 1e9).toLong
    val c = new Counters
    val bound = Promise[InetSocketAddress]()
    binding = true
    val listener = system.actorOf(Props(new Listener(port, c, bound)).withDispatcher(ListenerDispatcher), "echo-flood-listener")
    val local =
      try Await.result(bound.future, BindWait)
      catch {
        case _: TimeoutException => throw new RunFailure(s"not bound to $Host port $port within ${BindWait.toSeconds} s")
      }
    binding = false // (left set after a failed bind: the listener may still be logging it)
    val t0 = System.nanoTime()
    c.idleSinceNs = t0
    io.out.println(s"""{"event":"listening","benchmark":"echo_flood","role":"server","language":"${Main.Language}","address":"$Host","port":${local.getPort}}""")
    io.out.flush()
    listener ! StartAccepting

    val reason = Lifecycle.awaitStop(io.in, () => system.whenTerminated.isCompleted,
      () => c.open.get == 0 && System.nanoTime() - c.idleSinceNs >= idleNs)

    // Stop: no more accepts; every handler closes after what is already queued for it.
    listener ! Shutdown
    val graceEnd = System.nanoTime() + StopGraceMs * 1000000L
    while (c.open.get > 0 && System.nanoTime() < graceEnd) Thread.sleep(10)
    try Await.result(gracefulStop(listener, StopGraceMs.millis), (StopGraceMs + 1000).millis)
    catch { case _: TimeoutException | _: akka.pattern.AskTimeoutException => () }
    val secs = (System.nanoTime() - t0) / 1e9

    Outcome(
      params = Json.Obj("port" -> Json.Int(port.toLong), "idle_timeout_s" -> Json.Num(idleS)),
      metrics = Json.Obj(
        "elapsed_s" -> Json.Num(secs),
        "port" -> Json.Int(local.getPort.toLong),
        "connections_accepted" -> Json.Int(c.accepted.sum),
        "bytes_read" -> Json.Int(c.bytesRead.sum),
        "bytes_written" -> Json.Int(c.bytesWritten.sum),
        "connection_errors" -> Json.Int(c.errors.sum),
        "stop_reason" -> Json.Str(reason)),
      validation = Json.Obj("ok" -> Json.Bool(true), "reason" -> Json.Null),
      ok = true)
  }
}

/** akka.logging-filter (application.conf): Akka's default filter, except that while an
  * echo_flood listener is binding the TCP listener's errors (a failed bind, logged with a
  * stack trace) are dropped: the run reports that failure in its one `error:` line. Accept
  * errors later in the run are still logged. */
final class BindFailureLogFilter(settings: ActorSystem.Settings, eventStream: EventStream)
    extends DefaultLoggingFilter(() => eventStream.logLevel) {
  override def isErrorEnabled(logClass: Class[_], logSource: String): Boolean =
    !(EchoFlood.binding && logClass.getName == "akka.io.TcpListener") && super.isErrorEnabled(logClass, logSource)
}
