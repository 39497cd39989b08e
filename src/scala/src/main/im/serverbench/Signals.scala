package serverbench

/** SIGTERM and SIGINT as a stop request of a socket server (docs/sockets.md "The
  * lifecycle"): while installed, the signal calls `onSignal` instead of starting the JVM's
  * shutdown (whose hooks include Akka's CoordinatedShutdown, which would terminate the
  * actor system before the record is printed). The returned function puts the previous
  * handlers back. sun.misc.Signal (module jdk.unsupported) is the JDK's only way to do this;
  * where it is refused (e.g. under -Xrs) the default behaviour stays. */
object Signals {
  def onTermination(onSignal: () => Unit): () => Unit = {
    val handler: sun.misc.SignalHandler = (_: sun.misc.Signal) => onSignal()
    val previous = Seq("TERM", "INT").flatMap { name =>
      val sig = new sun.misc.Signal(name)
      try Some(sig -> sun.misc.Signal.handle(sig, handler))
      catch { case _: IllegalArgumentException => None }
    }
    () => previous.foreach { case (sig, old) =>
      try sun.misc.Signal.handle(sig, old) catch { case _: IllegalArgumentException => () }
    }
  }
}
