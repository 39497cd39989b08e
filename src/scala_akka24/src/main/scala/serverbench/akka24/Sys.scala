package serverbench.akka24

import java.nio.file.{Files, Paths}

object Sys {
  /** VmRSS from /proc/self/status in bytes; None where there is no such file (not Linux). */
  def rssBytes(): Option[Long] =
    try {
      val lines = Files.readAllLines(Paths.get("/proc/self/status"))
      var i = 0
      var r: Option[Long] = None
      while (i < lines.size && r.isEmpty) {
        val l = lines.get(i)
        if (l.startsWith("VmRSS:")) {
          val f = l.substring(6).trim.split("\\s+")
          val mult = if (f.length > 1 && f(1).equalsIgnoreCase("kB")) 1024L else 1L
          r = Some(f(0).toLong * mult)
        }
        i += 1
      }
      r
    } catch { case _: Exception => None }

  def heapUsedBytes(): Long = {
    val rt = Runtime.getRuntime
    rt.totalMemory() - rt.freeMemory()
  }

  def maxHeapBytes(): Option[Long] = {
    val m = Runtime.getRuntime.maxMemory()
    if (m == Long.MaxValue || m <= 0) None else Some(m)
  }
}
