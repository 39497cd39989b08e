package serverbench.im

import scala.concurrent.duration._

import serverbench.Rt.{Actor, ActorRef, ByteString, Tcp}

/** A connection's send queue (--sendq-lines), the one counting rule of docs/im.md: a line
  * counts from the moment it is queued until the write that contains it has returned, here
  * Akka IO's Ack of the Write (the bytes are in the kernel). Lines waiting here and those of
  * the one outstanding Write (the writer's current batch) both count. When queuing a line
  * would make the count exceed --sendq-lines, the client is disconnected with
  * "ERROR :SendQ exceeded" (counted: sendq_disconnects), as ircds do. */
trait SendQueue { this: Actor =>
  protected def conn: ActorRef
  protected def s: Conn.Shared
  protected def awaiting: Int
  protected def quitting: Boolean
  protected def goodbye(reason: String): Unit

  protected var queue = Vector.empty[ByteString] // lines not yet handed to Akka IO
  protected var queued = 0 // lines queued or in the outstanding Write
  private var inFlight = 0
  protected var over = false

  protected def send(line: ByteString): Unit =
    if (!over) {
      if (queued + 1 > s.sendqLines) overflow()
      else {
        queue :+= line
        queued += 1
        flush()
      }
    }

  protected def acked(n: Int): Unit = {
    queued -= n
    inFlight = 0
    flush()
  }

  protected def flush(): Unit =
    if (inFlight == 0 && queue.nonEmpty) {
      inFlight = queue.size
      conn ! Tcp.Write(if (inFlight == 1) queue.head else queue.reduce(_ ++ _), Conn.Ack(inFlight))
      queue = Vector.empty
    } else if (inFlight == 0 && quitting && awaiting == 0) conn ! Tcp.Close // QUIT relayed first

  private def overflow(): Unit = {
    over = true
    s.c.sendqDisconnects.increment()
    queue = Vector.empty
    if (inFlight == 0) conn ! Tcp.Write(ByteString("ERROR :SendQ exceeded\r\n"))
    conn ! Tcp.Close // after the outstanding Write, if the client ever reads it
    context.system.scheduler.scheduleOnce(Conn.GraceMs.millis, conn, Tcp.Abort)(context.dispatcher)
    goodbye("SendQ exceeded")
  }
}
