package serverbench

import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

/** The stop of a socket server (docs/sockets.md "The lifecycle"), shared by the echo_flood and
  * im servers: stdin EOF or the line "stop", SIGTERM/SIGINT (Signals), or the idle timeout
  * (`idle()`: no open connection for long enough). Compiled by the Akka 2.6 and Pekko
  * builds (src/main/im). */
object Lifecycle {
  val TickMs = 100L

  /** Waits for the stop and says why: "stdin_eof", "stop_line", "signal" or "idle_timeout".
    * Throws if the actor system ends meanwhile. */
  def awaitStop(in: java.io.InputStream, terminated: () => Boolean, idle: () => Boolean): String = {
    val stop = new LinkedBlockingQueue[String]()
    val stdin = new Thread(() => {
      val rd = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
      var line = try rd.readLine() catch { case _: java.io.IOException => null }
      while (line != null && line.trim != "stop") line = try rd.readLine() catch { case _: java.io.IOException => null }
      stop.offer(if (line == null) "stdin_eof" else "stop_line")
    }, "stdin-watch")
    stdin.setDaemon(true)
    stdin.start()
    val restoreSignals = Signals.onTermination(() => stop.offer("signal"))
    var reason: String = null
    try {
      while (reason == null) {
        reason = stop.poll(TickMs, TimeUnit.MILLISECONDS)
        if (reason == null) {
          if (terminated()) throw new IllegalStateException("the actor system terminated while serving (see stderr)")
          if (idle()) reason = "idle_timeout"
        }
      }
    } finally restoreSignals()
    reason
  }
}
