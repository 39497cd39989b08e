package serverbench

import java.util.concurrent.CountDownLatch

import Rt.{Actor, ActorSystem, Props}

/** docs/spec.md "spawn": N dormant actors, each signalling readiness once in preStart. */
object Spawn {
  sealed trait Msg // an Idle actor is never sent anything

  final class Idle(ready: CountDownLatch) extends Actor {
    override def preStart(): Unit = ready.countDown()
    def receive: Receive = Actor.emptyBehavior
  }

  /** props per_spawn: a class without constructor arguments, as the original's HelloActor
    * (ProcessCreationLatency/scala/maxBlockingProcesses.scala lines 7-11, 21), so that
    * Props[IdleByClass] is built from its class for every actorOf and Akka constructs each
    * actor by reflection. Its latch is the run's (one run per JVM). */
  final class IdleByClass extends Actor {
    override def preStart(): Unit = IdleByClass.ready.countDown()
    def receive: Receive = Actor.emptyBehavior
  }
  object IdleByClass { @volatile var ready: CountDownLatch = new CountDownLatch(0) }

  def run(system: ActorSystem, a: Cli.SpawnArgs, knobs: Map[String, String] = Map.empty): Outcome = {
    val n = a.processes
    val ready = new CountDownLatch(n)
    val perSpawn = knobs.get("props").contains("per_spawn")
    val props = Props(new Idle(ready)) // props once: one Props; its creator runs once per actor
    IdleByClass.ready = ready
    val rssBefore = Sys.rssBytes()

    val t0Ms = System.currentTimeMillis()
    val t0 = System.nanoTime()
    var i = 0
    if (perSpawn) while (i < n) { system.actorOf(Props[IdleByClass]()); i += 1 } // a new Props per actor
    else while (i < n) { system.actorOf(props); i += 1 }
    val spawnCallNs = System.nanoTime() - t0 // actorOf returns before the actor has started
    val t1Ms = System.currentTimeMillis() // timer spawn_call: what ProcessCreationLatency/scala/maxBlockingProcesses.scala lines 18-25 printed
    Waits.latch(system, ready)
    val allReadyNs = System.nanoTime() - t0

    val rssAfter = Sys.rssBytes()
    val heapUsed = Sys.heapUsedBytes()
    val readyCount = n - ready.getCount
    val perProcess = for (b <- rssBefore; af <- rssAfter) yield (af - b).toDouble / n
    val ok = readyCount == n
    Outcome(
      Json.Obj("processes" -> Json.int(n)),
      Json.Obj(Seq[(String, Json.Value)](
        "spawn_call_s" -> Json.num(spawnCallNs / 1e9),
        "all_ready_s" -> Json.num(allReadyNs / 1e9),
        "rss_bytes_before" -> Json.optInt(rssBefore),
        "rss_bytes_after" -> Json.optInt(rssAfter),
        "bytes_per_process" -> Json.optNum(perProcess),
        "runtime_memory_bytes" -> Json.int(heapUsed)) ++
        (if (a.variant == "fair") Nil
         else Seq(
           "reported_elapsed_s" -> Json.num(
             if (knobs.get("timer").contains("spawn_call")) Knobs.reportedSeconds(t0Ms, t1Ms) else allReadyNs / 1e9),
           "true_elapsed_s" -> Json.num(allReadyNs / 1e9))): _*),
      Json.Obj("ok" -> Json.Bool(ok), "ready" -> Json.int(readyCount)),
      ok)
  }
}
