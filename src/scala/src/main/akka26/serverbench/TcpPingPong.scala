package serverbench

import java.io.{BufferedInputStream, BufferedOutputStream, BufferedReader, InputStream, InputStreamReader, PrintStream}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket, SocketTimeoutException}
import java.nio.charset.StandardCharsets
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, ForkJoinWorkerThread, LinkedBlockingQueue, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

/** tcp_pingpong for the `scala` language (docs/sockets.md): blocking
  * java.net sockets and one Future per connection on Scala's global execution context,
  * as the original Scala program did (no `blocking {}`: at most `schedulers` connections
  * progress at a time on each side, which is how the original ran). C connections x R
  * round trips of "Ping"/"Pong". read_buffer_bytes K (1..4): bytes each side reads
  * before it answers (server) or counts a round trip (client); K = 1 is the original's
  * 1-byte buffer. Both sides count every byte they move.
  *
  * Entry point `serverbench.ScalaSocketsMain` (same jar as scala_akka, language "scala"). */
object ScalaSocketsMain {
  val Language = "scala"
  val Host = "127.0.0.1"
  val MessageBytes = 4
  val Backlog = 1024
  val TickMs = 100L
  val StopGraceMs = 5000L
  private val Ping = "Ping".getBytes(StandardCharsets.US_ASCII)
  private val Pong = "Pong".getBytes(StandardCharsets.US_ASCII)
  implicit private val ec: ExecutionContext = ExecutionContext.global

  def main(args: Array[String]): Unit = {
    val out = System.out
    System.setOut(System.err)
    // Whatever goes wrong, one `error:` line and exit 1 (docs/spec.md), never a stack trace.
    val code =
      try run(args, out, System.err, System.in)
      catch {
        case e: Throwable =>
          System.err.println(s"error: ${describe(e)}")
          Main.ExitRunFailed
      }
    out.flush()
    if (!signalled.get) sys.exit(code)
  }

  /** An exception in one line: what it is and its message, without a stack trace. */
  def describe(e: Throwable): String = e match {
    case _: SocketTimeoutException => s"timeout (${e.getClass.getName}: ${e.getMessage})"
    case _ if e.getMessage == null || e.getMessage.isEmpty => e.getClass.getName
    case _ => s"${e.getClass.getName}: ${e.getMessage.linesIterator.mkString(" ")}"
  }

  // Set by the SIGTERM shutdown hook; the hook waits for the record, then halts with 0.
  private val signalled = new java.util.concurrent.atomic.AtomicBoolean(false)
  private val recordOut = new CountDownLatch(1)

  /** Whether this main has the run's benchmark and role. */
  private def built(r: Cli.Run): Boolean = r.benchmark == "tcp_pingpong" && r.role.exists(Set("server", "client"))

  /** The command line as run will carry it out, or the usage error (the line run prints
    * after "error: ", exit 2). */
  def command(args: Seq[String]): Either[String, Cli.Command] =
    Cli.parse(args, Language) match {
      case Right(r: Cli.Run) if !built(r) =>
        Left(s"${r.benchmark} ${r.role.getOrElse("")} is listed for $Language in cli.json but not built into this program")
      case other => other
    }

  def run(args: Array[String], out: PrintStream, err: PrintStream, in: InputStream): Int =
    command(args.toSeq) match {
      case Left(msg) => err.println(s"error: $msg"); Main.ExitUsage
      case Right(Cli.Help) => out.println(Cli.usage(Language)); Main.ExitOk
      case Right(Cli.Version) =>
        out.println(Json.encode(Json.Obj("program" -> Json.Str("serverbench"),
          "program_version" -> Json.Str(Main.ProgramVersion), "language" -> Json.Str(Language), "runtime" -> runtime())))
        Main.ExitOk
      case Right(r: Cli.Run) if r.role.contains("server") => server(r, out, err, in)
      case Right(r: Cli.Run) => client(r, out, err)
    }

  def schedulers(): Int = {
    val f = Future {
      Thread.currentThread() match {
        case t: ForkJoinWorkerThread => t.getPool.getParallelism
        case _ => Runtime.getRuntime.availableProcessors
      }
    }
    Await.result(f, 30.seconds)
  }

  def runtime(): Json.Value = Json.Obj(
    "name" -> Json.Str("scala"),
    "version" -> Json.Str(s"Scala ${scala.util.Properties.versionNumberString} / JVM ${System.getProperty("java.version")}"),
    "schedulers" -> Json.Int(schedulers().toLong),
    "max_heap_bytes" -> Json.Int(Runtime.getRuntime.maxMemory))

  private def variantOf(r: Cli.Run): String = r.variant.getOrElse("fair")

  /** Reads exactly buf.length bytes unless the stream ends; returns the count read. */
  private def readFull(in: InputStream, buf: Array[Byte]): Int = {
    var got = 0
    var eof = false
    while (got < buf.length && !eof) {
      val n = in.read(buf, got, buf.length - got)
      if (n < 0) eof = true else got += n
    }
    got
  }

  // ---- server ----

  def server(r: Cli.Run, out: PrintStream, err: PrintStream, in: InputStream): Int = {
    val k = r.params.int("read_buffer_bytes")
    val idleMs = (r.params.double("idle_timeout_s") * 1000).toLong
    val ss = new ServerSocket()
    try ss.bind(new InetSocketAddress(InetAddress.getByName(Host), r.params.int("port")), Backlog)
    catch {
      case e: java.io.IOException =>
        err.println(s"error: cannot listen on $Host port ${r.params.int("port")}: $e")
        return Main.ExitRunFailed
    }
    val port = ss.getLocalPort
    val t0 = System.nanoTime()
    val rt = runtime() // before the listening line: the global pool exists before clients come
    out.println(s"""{"event":"listening","benchmark":"tcp_pingpong","role":"server","language":"$Language","address":"$Host","port":$port}""")
    out.flush()
    val bytesRead, bytesWritten, replies, accepted, connErrs = new AtomicLong
    val open = ConcurrentHashMap.newKeySet[Socket]()
    val lastIdle = new AtomicLong(System.nanoTime())
    val stop = new LinkedBlockingQueue[String]()
    val stdin = new Thread(() => {
      val rd = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
      var line = rd.readLine()
      while (line != null && line.trim != "stop") line = rd.readLine()
      stop.offer(if (line == null) "stdin_eof" else "stop_line")
    }, "stdin-watch")
    stdin.setDaemon(true)
    stdin.start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => {
      signalled.set(true)
      stop.offer("signal")
      recordOut.await(StopGraceMs * 2, TimeUnit.MILLISECONDS)
      Runtime.getRuntime.halt(Main.ExitOk)
    }))
    val acceptor = new Thread(() => {
      var running = true
      while (running) {
        try {
          val s = ss.accept()
          accepted.incrementAndGet()
          open.add(s)
          Future { // one Future per connection on the global pool, as in the original
            try serve(s, k, bytesRead, bytesWritten, replies, connErrs)
            finally {
              try s.close() catch { case _: java.io.IOException => () }
              open.remove(s)
              if (open.isEmpty) lastIdle.set(System.nanoTime())
            }
          }
        } catch { case _: java.io.IOException => running = false }
      }
    }, "acceptor")
    acceptor.setDaemon(true)
    acceptor.start()

    var reason: String = null
    while (reason == null) {
      reason = stop.poll(TickMs, TimeUnit.MILLISECONDS)
      if (reason == null && open.isEmpty && (System.nanoTime() - lastIdle.get) / 1000000 >= idleMs) reason = "idle_timeout"
    }
    try ss.close() catch { case _: java.io.IOException => () }
    open.asScala.foreach(s => try s.close() catch { case _: java.io.IOException => () })
    val graceEnd = System.nanoTime() + StopGraceMs * 1000000
    while (!open.isEmpty && System.nanoTime() < graceEnd) Thread.sleep(10)
    val secs = (System.nanoTime() - t0) / 1e9
    val validation =
      if (k < MessageBytes && variantOf(r) != "paper")
        Json.Obj("ok" -> Json.Bool(false), "reason" -> Json.Str(
          s"read buffer of $k byte(s) < the 4-byte message: the server answered every read, not every message"))
      else Json.Obj("ok" -> Json.Bool(true), "reason" -> Json.Null)
    out.println(Json.encode(Json.Obj(
      "benchmark" -> Json.Str("tcp_pingpong"), "role" -> Json.Str("server"), "language" -> Json.Str(Language),
      "variant" -> Json.Str(variantOf(r)),
      "params" -> Json.Obj("port" -> Json.Int(r.params.long("port")), "read_buffer_bytes" -> Json.Int(k.toLong),
        "idle_timeout_s" -> Json.Num(r.params.double("idle_timeout_s"))),
      "metrics" -> Json.Obj("elapsed_s" -> Json.Num(secs), "port" -> Json.Int(port.toLong),
        "connections_accepted" -> Json.Int(accepted.get), "bytes_read" -> Json.Int(bytesRead.get),
        "bytes_written" -> Json.Int(bytesWritten.get), "replies" -> Json.Int(replies.get),
        "connection_errors" -> Json.Int(connErrs.get), "stop_reason" -> Json.Str(reason)),
      "validation" -> validation,
      "runtime" -> rt)))
    out.flush()
    recordOut.countDown()
    Main.ExitOk
  }

  private def serve(s: Socket, k: Int, bytesRead: AtomicLong, bytesWritten: AtomicLong, replies: AtomicLong,
                    connErrs: AtomicLong): Unit = {
    val in = new BufferedInputStream(s.getInputStream)
    val out = new BufferedOutputStream(s.getOutputStream)
    val buf = new Array[Byte](k)
    var going = true
    try {
      while (going) {
        val n = readFull(in, buf)
        bytesRead.addAndGet(n.toLong)
        if (n < k) going = false
        else {
          out.write(Pong)
          out.flush()
          bytesWritten.addAndGet(MessageBytes.toLong)
          replies.incrementAndGet()
        }
      }
    } catch {
      case _: java.io.IOException => if (!s.isClosed) connErrs.incrementAndGet()
    }
  }

  // ---- client ----

  final case class ConnResult(written: Long, read: Long, counted: Long, completed: Long, error: Option[String],
                              dialError: Boolean)

  private def pingConn(port: Int, rounds: Long, k: Int, deadlineNs: Long): ConnResult = {
    val s = new Socket()
    var written, read, counted = 0L
    try {
      val leftMs = math.max(1L, (deadlineNs - System.nanoTime()) / 1000000)
      try s.connect(new InetSocketAddress(InetAddress.getByName(Host), port), math.min(leftMs, Int.MaxValue.toLong).toInt)
      catch { case NonFatal(e) => return ConnResult(0, 0, 0, 0, Some(describe(e)), dialError = true) }
      var err: Option[String] = None
      // Any failure once connected (reset, broken pipe, timeout, a closed socket, ...) is
      // this connection's error, reported in the record; nothing escapes as an exception.
      try {
        s.setSoTimeout(math.max(1L, math.min((deadlineNs - System.nanoTime()) / 1000000, Int.MaxValue.toLong)).toInt)
        val in = new BufferedInputStream(s.getInputStream)
        val out = new BufferedOutputStream(s.getOutputStream)
        val buf = new Array[Byte](k)
        var i = 0L
        while (i < rounds && err.isEmpty) {
          out.write(Ping)
          out.flush()
          written += MessageBytes
          val n = readFull(in, buf)
          read += n
          if (n < k) err = Some("connection closed by the server")
          else counted += 1
          i += 1
        }
      } catch {
        case NonFatal(e) => err = Some(describe(e))
      }
      ConnResult(written, read, counted, read / MessageBytes, err, dialError = false)
    } finally {
      try s.close() catch { case _: java.io.IOException => () }
    }
  }

  def client(r: Cli.Run, out: PrintStream, err: PrintStream): Int = {
    val conns = r.params.long("connections")
    val rounds = r.params.long("round_trips")
    val k = r.params.int("read_buffer_bytes")
    val port = r.params.int("port")
    val timeoutS = r.params.double("client_timeout_s")
    val rt = runtime()
    val t0 = System.nanoTime()
    val deadline = t0 + (timeoutS * 1e9).toLong
    val futures = (0L until conns).map(_ => Future(pingConn(port, rounds, k, deadline)))
    val all = Future.sequence(futures)
    val results =
      try Await.result(all, (timeoutS + 5).seconds)
      catch {
        case _: java.util.concurrent.TimeoutException =>
          err.println(s"error: the client did not finish within ${timeoutS} s")
          return Main.ExitRunFailed
        case NonFatal(e) => // pingConn keeps its failures; this is the pool or the runtime failing
          err.println(s"error: ${describe(e)}")
          return Main.ExitRunFailed
      }
    val secs = (System.nanoTime() - t0) / 1e9
    val dialFails = results.filter(_.dialError)
    if (dialFails.nonEmpty) {
      err.println(s"error: cannot connect to $Host:$port (${dialFails.size} of $conns connections failed): ${dialFails.head.error.getOrElse("")}")
      return Main.ExitRunFailed
    }
    val w = results.map(_.written).sum
    val rd = results.map(_.read).sum
    val counted = results.map(_.counted).sum
    val completed = results.map(_.completed).sum
    val errors = results.flatMap(_.error)
    val want = MessageBytes.toLong * conns * rounds
    val us = secs * 1e6
    val variant = variantOf(r)
    val reason: Option[String] =
      if (errors.nonEmpty) Some(s"${errors.size} connection(s) failed: ${errors.head}")
      else if (variant == "paper" && k < MessageBytes) {
        if (w == want && rd == k.toLong * conns * rounds) None
        else Some(s"paper variant: expected $want bytes written and ${k.toLong * conns * rounds} read, got $w and $rd")
      } else if (w != want || rd != want)
        Some(s"moved $w bytes out and $rd in, expected $want each way (4 x $conns connections x $rounds round trips); " +
          s"read buffer $k byte(s): a round trip was counted per read")
      else None
    val ok = reason.isEmpty
    out.println(Json.encode(Json.Obj(
      "benchmark" -> Json.Str("tcp_pingpong"), "role" -> Json.Str("client"), "language" -> Json.Str(Language),
      "variant" -> Json.Str(variant),
      "params" -> Json.Obj("host" -> Json.Str(r.params.str("host")), "connections" -> Json.Int(conns),
        "round_trips" -> Json.Int(rounds), "read_buffer_bytes" -> Json.Int(k.toLong), "client_timeout_s" -> Json.Num(timeoutS)),
      "metrics" -> Json.Obj("elapsed_s" -> Json.Num(secs), "port" -> Json.Int(port.toLong),
        "connections_opened" -> Json.Int(conns), "bytes_written" -> Json.Int(w), "bytes_read" -> Json.Int(rd),
        "round_trips_counted" -> Json.Int(counted), "round_trips_completed" -> Json.Int(completed),
        "reported_us_per_round_trip" -> Json.Num(us / (conns * rounds).toDouble),
        "true_us_per_round_trip" -> (if (completed > 0) Json.Num(us / completed.toDouble) else Json.Null),
        "expected_bytes_each_way" -> Json.Int(want), "connection_errors" -> Json.Int(errors.size.toLong)),
      "validation" -> Json.Obj("ok" -> Json.Bool(ok), "reason" -> reason.fold[Json.Value](Json.Null)(Json.Str(_))),
      "runtime" -> rt)))
    out.flush()
    // As the Go client: a failed run still prints its record (exit 1), and says why on stderr in one line.
    reason.foreach(why => err.println(s"validation failed: $why"))
    if (ok) Main.ExitOk else Main.ExitRunFailed
  }
}
