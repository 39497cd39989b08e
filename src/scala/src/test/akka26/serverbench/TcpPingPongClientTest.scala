package serverbench

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, PrintStream}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import TestSupport._

/** The `scala` tcp_pingpong client when the server fails it (docs/spec.md exit codes): no
  * server -> one `error: cannot connect` line, nothing on stdout, exit 1; a server that
  * resets its connections (at once or mid-run) -> the record with validation.ok false,
  * exit 1 and one stderr line naming the failure; never an exception or a stack trace. */
object TcpPingPongClientTest {
  final case class Result(code: Int, stdout: String, stderr: String) {
    def errLines: Seq[String] = stderr.split("\n").toSeq.filter(_.trim.nonEmpty)
  }
}

class TcpPingPongClientTest {
  import TcpPingPongClientTest.Result

  private def client(port: Int, conns: Int, rounds: Int): Result = {
    val o = new ByteArrayOutputStream()
    val e = new ByteArrayOutputStream()
    val args = Array("tcp_pingpong", "client", "--port", port.toString, "--connections", conns.toString,
      "--round-trips", rounds.toString, "--timeout-s", "30")
    val code = ScalaSocketsMain.run(args, new PrintStream(o, true, "UTF-8"), new PrintStream(e, true, "UTF-8"),
      new ByteArrayInputStream(Array.emptyByteArray))
    Result(code, new String(o.toByteArray, StandardCharsets.UTF_8), new String(e.toByteArray, StandardCharsets.UTF_8))
  }

  /** Accepts every connection, answers `answer` pings with Pong, then resets it (RST). */
  private def resettingServer(answer: Int)(body: Int => Unit): Unit = {
    val ss = new ServerSocket()
    ss.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 1024)
    val t = new Thread(() => {
      try {
        while (true) {
          val s: Socket = ss.accept()
          val th = new Thread(() => {
            try {
              val in = s.getInputStream
              val out = s.getOutputStream
              var i = 0
              while (i < answer && in.readNBytes(4).length == 4) {
                out.write("Pong".getBytes(StandardCharsets.US_ASCII))
                out.flush()
                i += 1
              }
            } catch { case _: java.io.IOException => () }
            finally {
              try { s.setSoLinger(true, 0); s.close() } catch { case _: java.io.IOException => () }
            }
          })
          th.setDaemon(true)
          th.start()
        }
      } catch { case _: java.io.IOException => () } // the server socket closed: done
    })
    t.setDaemon(true)
    t.start()
    try body(ss.getLocalPort) finally ss.close()
  }

  private def noStackTrace(r: Result): Unit = {
    assertFalse(r.stderr.contains("\tat "), r.stderr)
    assertFalse(r.stderr.contains("Exception in thread"), r.stderr)
  }

  private def failedRecord(r: Result, mentions: String*): Unit = {
    noStackTrace(r)
    assertEquals(1, r.code, r.stderr)
    val lines = r.stdout.split("\n").toSeq.filter(_.nonEmpty)
    assertEquals(1, lines.size, r.stdout)
    val j = mapper.readTree(lines.head)
    assertTrue(errors(recordSchema, j).isEmpty, s"${errors(recordSchema, j)} in $j")
    assertFalse(j.at("/validation/ok").asBoolean)
    val reason = j.at("/validation/reason").asText
    assertTrue(reason.contains("connection(s) failed"), reason)
    assertTrue(j.at("/metrics/connection_errors").asLong >= 1)
    assertEquals(1, r.errLines.size, r.stderr)
    assertTrue(r.errLines.head.contains(reason), r.stderr)
    mentions.foreach(m => assertTrue(r.errLines.head.contains(m), s"'$m' not in ${r.stderr}"))
  }

  @Test def nothingListeningIsOneErrorLine(): Unit = {
    val ss = new ServerSocket()
    ss.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0))
    val port = ss.getLocalPort
    ss.close() // a port nobody listens on
    val r = client(port, 3, 10)
    noStackTrace(r)
    assertEquals(1, r.code)
    assertEquals("", r.stdout)
    assertEquals(1, r.errLines.size, r.stderr)
    assertTrue(r.errLines.head.startsWith(s"error: cannot connect to 127.0.0.1:$port"), r.stderr)
    assertTrue(r.errLines.head.contains("ConnectException"), r.stderr)
  }

  /** Reset as soon as accepted: a connection whose reset arrives before the client's
    * connect has returned is one it could not make (as Go's dial); either way one line. */
  @Test def resetAtOnceIsAFailure(): Unit =
    resettingServer(0) { port =>
      val r = client(port, 4, 100)
      if (r.stdout.nonEmpty) failedRecord(r)
      else {
        noStackTrace(r)
        assertEquals(1, r.code, r.stderr)
        assertEquals(1, r.errLines.size, r.stderr)
        assertTrue(r.errLines.head.startsWith(s"error: cannot connect to 127.0.0.1:$port"), r.stderr)
      }
    }

  @Test def resetMidRunIsAFailedRecord(): Unit =
    resettingServer(5) { port =>
      val r = client(port, 3, 1000)
      failedRecord(r)
      val j = mapper.readTree(r.stdout)
      assertEquals(3L * 5, j.at("/metrics/round_trips_completed").asLong) // what was answered before the reset
    }

  @Test def aServerThatClosesEarlyIsNamed(): Unit = {
    // ends its side cleanly (FIN) after 2 answers instead of resetting, then waits for
    // the client to close (so that no unread byte turns the close into a reset)
    val ss = new ServerSocket()
    ss.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0))
    val t = new Thread(() => {
      try {
        val s = ss.accept()
        val in = s.getInputStream
        for (_ <- 0 until 2) { in.readNBytes(4); s.getOutputStream.write("Pong".getBytes(StandardCharsets.US_ASCII)) }
        s.shutdownOutput()
        while (in.read() >= 0) ()
        s.close()
      } catch { case _: java.io.IOException => () }
    })
    t.setDaemon(true)
    t.start()
    try failedRecord(client(ss.getLocalPort, 1, 50), "connection closed by the server")
    finally ss.close()
  }
}
