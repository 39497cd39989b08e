package serverbench.im

import java.nio.file.{Files, Paths}

import scala.util.Using

/** Whether the client of one of our connections has closed its end, asked of the kernel
  * (Linux /proc/net/tcp and tcp6): on loopback the client's FIN is in before its next
  * connection's first line, but Akka IO may tell the old connection's actor of it only
  * later. The socket is closed when it is no longer ESTABLISHED (CLOSE_WAIT: the FIN came;
  * LAST_ACK or not listed: Akka IO has closed it already, or a reset); a table in which even our listening socket is missing (no /proc, an
  * unknown format) says nothing, so the answer is then "not closed". Used only when a NICK
  * collides, so its cost (reading the tables) is paid rarely. */
object PeerState {
  /** The nick if free; or if its holder's client has already closed its socket and only the
    * holder's actor has yet to hear of it (docs/im.md: a client that drops and reconnects at
    * once gets its nick). The holder may free it meanwhile: then it is free. */
  def claim(nicks: java.util.concurrent.ConcurrentHashMap[String, Conn.Nick], k: String, mine: Conn.Nick): Boolean = {
    var held = nicks.putIfAbsent(k, mine)
    var tries = 0
    while (held != null && (held.client ne mine.client) && tries < 3 &&
           closed(held.client.localPort, held.client.remotePort)) {
      if (nicks.replace(k, held, mine)) held = null
      else { held = nicks.putIfAbsent(k, mine); tries += 1 }
    }
    held == null
  }

  private val Established = "01"
  private val Listen = "0A"
  private val Files6 = Seq("/proc/net/tcp", "/proc/net/tcp6")

  def closed(localPort: Int, remotePort: Int): Boolean =
    localPort > 0 && remotePort > 0 && {
      val l = f":$localPort%04X"
      val r = f":$remotePort%04X"
      var listening = false
      var state: String = null
      for (f <- Files6 if Files.isReadable(Paths.get(f)))
        Using(Files.newBufferedReader(Paths.get(f))) { rd =>
          var line = rd.readLine() // the header
          line = rd.readLine()
          while (line != null) {
            val cols = line.trim.split("\\s+")
            if (cols.length > 3 && cols(1).endsWith(l)) {
              if (cols(3) == Listen) listening = true
              else if (cols(2).endsWith(r)) state = cols(3)
            }
            line = rd.readLine()
          }
        }
      listening && state != Established
    }
}
