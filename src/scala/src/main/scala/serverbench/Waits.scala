package serverbench

import java.util.concurrent.{CountDownLatch, TimeUnit, TimeoutException}

import scala.concurrent.{Await, Future}
import scala.concurrent.duration._

import Rt.ActorSystem

/** Waits of the main thread that give up if the ActorSystem dies under them (with
  * <runtime>.jvm-exit-on-fatal-error = off, an OutOfMemoryError in an actor terminates the
  * system): then Main prints one `error:` line and exits 1 instead of hanging. A timed
  * await returns as soon as the latch opens, so polling adds nothing to a measurement. */
object Waits {
  private def failIfTerminated(system: ActorSystem): Unit =
    if (system.whenTerminated.isCompleted)
      throw new IllegalStateException("the actor system terminated before the run finished (see stderr)")

  def latch(system: ActorSystem, l: CountDownLatch): Unit =
    while (!l.await(50, TimeUnit.MILLISECONDS)) failIfTerminated(system)

  def result[T](system: ActorSystem, f: Future[T]): T = {
    while (!f.isCompleted) {
      try Await.ready(f, 50.millis)
      catch { case _: TimeoutException => failIfTerminated(system) }
    }
    f.value.get.get
  }
}
