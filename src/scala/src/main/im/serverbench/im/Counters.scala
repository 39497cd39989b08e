package serverbench.im

import java.util.concurrent.atomic.{AtomicLong, LongAdder}

/** The im server's counters, shared by every actor of one run (the record's metrics). */
final class Counters {
  val accepted, routed, channelDeliveries, sessionsStarted, sessionsKilled, sessionsRestarted, sendqDisconnects,
    badLines, connectionErrors, channelsKilled, channelsRestarted, connectionsKilled, chaosDropped = new LongAdder
  val open, registeredNow, registeredMax = new AtomicLong
  /** The last MEMORY command's measure (-1: none came). */
  val liveBytes = new AtomicLong(-1)
  @volatile var idleSinceNs: Long = System.nanoTime()

  def closed(): Unit = if (open.decrementAndGet() == 0) idleSinceNs = System.nanoTime()

  def registered(): Unit = {
    val n = registeredNow.incrementAndGet()
    var max = registeredMax.get
    while (n > max && !registeredMax.compareAndSet(max, n)) max = registeredMax.get
  }

  /** Live heap after a forced full collection (System.gc(), which the JVM honours unless
    * -XX:+DisableExplicitGC): totalMemory - freeMemory, as docs/im.md says for the JVM. */
  def measureLive(): Long = {
    System.gc()
    val rt = Runtime.getRuntime
    val n = rt.totalMemory - rt.freeMemory
    liveBytes.set(n)
    n
  }
}
