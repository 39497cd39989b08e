package serverbench

import java.io.{ByteArrayOutputStream, OutputStream, PipedInputStream, PipedOutputStream, PrintStream}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets
import java.nio.file.Paths
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import com.fasterxml.jackson.databind.JsonNode
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import TestSupport._

/** The scala_akka echo_flood server in-process over loopback: listening line first,
  * every byte echoed and counted, each way of stopping, a taken port; and SIGTERM in a
  * second JVM. The load generator's runs against it are tests/python/test_echo_flood.py. */
class EchoFloodTest {
  private val Wait = 60.seconds

  /** stdout as lines, readable while the run goes on. */
  private final class Lines extends OutputStream {
    val q = new LinkedBlockingQueue[String]()
    private val buf = new ByteArrayOutputStream()
    override def write(b: Int): Unit = synchronized {
      if (b == '\n') { q.put(new String(buf.toByteArray, StandardCharsets.UTF_8)); buf.reset() } else buf.write(b)
    }
    def next(): String = {
      val l = q.poll(Wait.toSeconds, TimeUnit.SECONDS)
      assertNotNull(l, "no line on stdout in time")
      l
    }
  }

  private final class Server(args: String*) {
    val stdout = new Lines
    val stderr = new ByteArrayOutputStream()
    val stdin = new PipedOutputStream()
    private val in = new PipedInputStream(stdin)
    val code: Future[Int] = Future(Main.run(("echo_flood" +: "server" +: args).toArray,
      new PrintStream(stdout, true, "UTF-8"), new PrintStream(stderr, true, "UTF-8"), in = in))
    def exit(): Int = Await.result(code, Wait)
    def err: String = new String(stderr.toByteArray, StandardCharsets.UTF_8)
  }

  private def listening(s: Server): Int = {
    val ev = mapper.readTree(s.stdout.next())
    assertEquals("listening", ev.get("event").asText)
    assertEquals("echo_flood", ev.get("benchmark").asText)
    assertEquals("server", ev.get("role").asText)
    assertEquals("scala_akka", ev.get("language").asText)
    assertEquals("127.0.0.1", ev.get("address").asText)
    val fields = ev.fieldNames().asScala.toSeq
    assertEquals(cliJson.at("/sockets/listening_fields").elements().asScala.map(_.asText).toSeq, fields)
    ev.get("port").asInt
  }

  private def record(s: Server, stopReason: String): JsonNode = {
    assertEquals(0, s.exit(), s.err)
    val j = mapper.readTree(s.stdout.next())
    assertTrue(s.stdout.q.isEmpty, s"more than one record: ${s.stdout.q}")
    val errs = errors(schema(Some("echo_flood_server")), j)
    assertTrue(errs.isEmpty, s"schema errors $errs in $j")
    assertTrue(errors(recordSchema, j).isEmpty)
    assertEquals("server", j.get("role").asText)
    assertEquals("fair", j.get("variant").asText)
    assertTrue(j.at("/validation/ok").asBoolean)
    assertEquals(stopReason, j.at("/metrics/stop_reason").asText)
    j
  }

  private def pattern(conn: Int, n: Int): Array[Byte] = Array.tabulate(n)(i => ((i * 31 + conn * 7) % 251).toByte)

  /** Writes n bytes and reads n back on one connection (a writer thread and this one
    * reading, so that neither side's buffers need to hold it all). */
  private def echo(port: Int, conn: Int, n: Int): Array[Byte] = {
    val s = new Socket(InetAddress.getByName("127.0.0.1"), port)
    try {
      s.setSoTimeout(30000)
      val data = pattern(conn, n)
      val w = new Thread(() => try { s.getOutputStream.write(data); s.getOutputStream.flush() }
                               catch { case _: java.io.IOException => () })
      w.start()
      val got = s.getInputStream.readNBytes(n)
      w.join(Wait.toMillis)
      got
    } finally s.close()
  }

  @Test def echoesEveryByteAndCountsThem(): Unit = {
    val srv = new Server("--port", "0", "--idle-timeout-s", "60")
    val port = listening(srv)
    val n = 200000 // several 32 KiB reads per connection
    val conns = 5
    val echoed = (0 until conns).map(i => Future(scala.concurrent.blocking(echo(port, i, n))))
    echoed.zipWithIndex.foreach { case (f, i) => assertArrayEquals(pattern(i, n), Await.result(f, Wait), s"connection $i") }
    srv.stdin.close() // stdin EOF: stop
    val j = record(srv, "stdin_eof")
    assertEquals(conns.toLong * n, j.at("/metrics/bytes_read").asLong)
    assertEquals(conns.toLong * n, j.at("/metrics/bytes_written").asLong)
    assertEquals(conns.toLong, j.at("/metrics/connections_accepted").asLong)
    assertEquals(0L, j.at("/metrics/connection_errors").asLong)
    assertEquals(port.toLong, j.at("/metrics/port").asLong)
    assertEquals(0L, j.at("/params/port").asLong)
    assertEquals(60.0, j.at("/params/idle_timeout_s").asDouble, 0.0)
    assertEquals("akka", j.at("/runtime/name").asText)
  }

  @Test def stopsOnStdinEofWithOpenConnection(): Unit = {
    val srv = new Server()
    val port = listening(srv)
    val s = new Socket(InetAddress.getByName("127.0.0.1"), port)
    try {
      s.getOutputStream.write("hello".getBytes(StandardCharsets.US_ASCII))
      assertEquals("hello", new String(s.getInputStream.readNBytes(5), StandardCharsets.US_ASCII))
      srv.stdin.close()
      val j = record(srv, "stdin_eof")
      assertEquals(5L, j.at("/metrics/bytes_read").asLong)
      assertEquals(5L, j.at("/metrics/bytes_written").asLong)
      assertEquals(1L, j.at("/metrics/connections_accepted").asLong)
      s.setSoTimeout(10000)
      assertEquals(-1, try s.getInputStream.read() catch { case _: java.io.IOException => -1 }, "the server closed the connection")
    } finally s.close()
  }

  @Test def stopsOnTheStopLine(): Unit = {
    val srv = new Server("--idle-timeout-s", "3600")
    listening(srv)
    srv.stdin.write("hello\n  stop \n".getBytes(StandardCharsets.UTF_8))
    srv.stdin.flush()
    val j = record(srv, "stop_line")
    assertEquals(0L, j.at("/metrics/connections_accepted").asLong)
    srv.stdin.close()
  }

  @Test def stopsWhenIdle(): Unit = {
    val srv = new Server("--idle-timeout-s", "0.3")
    listening(srv)
    val j = record(srv, "idle_timeout")
    assertTrue(j.at("/metrics/elapsed_s").asDouble >= 0.3)
    srv.stdin.close()
  }

  @Test def takenPortIsOneErrorLine(): Unit = {
    val taken = new ServerSocket()
    try {
      taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0))
      val srv = new Server("--port", taken.getLocalPort.toString)
      assertEquals(1, srv.exit())
      assertTrue(srv.stdout.q.isEmpty, s"stdout: ${srv.stdout.q}")
      val lines = srv.err.split("\n").toSeq.filter(_.trim.nonEmpty)
      assertEquals(1, lines.size, srv.err)
      assertTrue(lines.head.startsWith(s"error: cannot listen on 127.0.0.1 port ${taken.getLocalPort}"), lines.head)
      srv.stdin.close()
    } finally taken.close()
  }

  @Test def helpListsOnlyItsOwnRoles(): Unit = {
    val r = run(Seq("--help"))
    assertEquals(0, r.code)
    assertTrue(r.stdout.contains("serverbench echo_flood server"), r.stdout)
    assertFalse(r.stdout.contains("echo_flood client"), r.stdout)
    assertFalse(r.stdout.contains("tcp_pingpong"), r.stdout)
    val c = run(Seq("echo_flood", "client", "--port", "1", "--connections", "1"))
    assertEquals(2, c.code)
    assertTrue(c.stderr.contains("scala_akka does not implement the benchmark echo_flood role client"), c.stderr)
  }

  /** A second JVM as the harness starts it (class path instead of -jar, since the jar is
    * built after the tests). */
  private def forked(args: String*): Process = {
    val javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val cmd = Seq(javaBin, "-XX:ActiveProcessorCount=1", "-Xms64m", "-Xmx64m", "-Xss512k",
      "-Dakka.actor.default-dispatcher.fork-join-executor.parallelism-min=1",
      "-Dakka.actor.default-dispatcher.fork-join-executor.parallelism-max=1",
      "-cp", System.getProperty("java.class.path"), "serverbench.Main", "echo_flood", "server") ++ args
    new ProcessBuilder(cmd.asJava).start()
  }

  /** Akka's own log of the failed bind (a stack trace) is not printed: one line only. */
  @Test def takenPortInASecondJvm(): Unit = {
    val taken = new ServerSocket()
    try {
      taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0))
      val p = forked("--port", taken.getLocalPort.toString)
      try {
        val out = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8)
        val err = new String(p.getErrorStream.readAllBytes(), StandardCharsets.UTF_8)
        assertTrue(p.waitFor(60, TimeUnit.SECONDS))
        assertEquals(1, p.exitValue(), err)
        assertEquals("", out)
        val lines = err.split("\n").toSeq.filter(_.trim.nonEmpty)
        assertEquals(1, lines.size, err)
        assertTrue(lines.head.startsWith("error: cannot listen on 127.0.0.1 port"), err)
      } finally p.destroyForcibly()
    } finally taken.close()
  }

  /** SIGTERM stops the server, which still prints its record and exits 0; stderr stays
    * empty. */
  @Test def sigtermInASecondJvm(): Unit = {
    val p = forked()
    try {
      val out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream, StandardCharsets.UTF_8))
      val port = mapper.readTree(out.readLine()).get("port").asInt
      val got = echo(port, 1, 70000)
      assertArrayEquals(pattern(1, 70000), got)
      // SIGTERM (Process.destroy would also close our end of its pipes)
      assertEquals(0, new ProcessBuilder("kill", "-TERM", p.pid.toString).start().waitFor())
      assertTrue(p.waitFor(60, TimeUnit.SECONDS))
      val rest = Iterator.continually(out.readLine()).takeWhile(_ != null).toSeq
      val errText = new String(p.getErrorStream.readAllBytes(), StandardCharsets.UTF_8)
      assertEquals(0, p.exitValue(), errText)
      assertEquals(1, rest.size, rest.mkString("\n"))
      val j = mapper.readTree(rest.head)
      assertTrue(errors(recordSchema, j).isEmpty)
      assertEquals("signal", j.at("/metrics/stop_reason").asText)
      assertEquals(70000L, j.at("/metrics/bytes_written").asLong)
      assertEquals(1, j.at("/runtime/schedulers").asInt)
      assertEquals("", errText.trim)
    } finally p.destroyForcibly()
  }
}
