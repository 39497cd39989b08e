package serverbench.im

import java.util.concurrent.atomic.{AtomicLong, LongAdder}

/** The im server's counters, shared by every actor of one run (the record's metrics). */
final class Counters {
  val accepted, routed, channelDeliveries, sessionsStarted, sessionsKilled, sessionsRestarted, sendqDisconnects,
    badLines, connectionErrors = new LongAdder
  val open, registeredNow, registeredMax = new AtomicLong
  @volatile var idleSinceNs: Long = System.nanoTime()

  def closed(): Unit = if (open.decrementAndGet() == 0) idleSinceNs = System.nanoTime()

  def registered(): Unit = {
    val n = registeredNow.incrementAndGet()
    var max = registeredMax.get
    while (n > max && !registeredMax.compareAndSet(max, n)) max = registeredMax.get
  }
}
