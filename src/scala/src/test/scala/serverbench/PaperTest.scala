package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import TestSupport._

/** The paper variant's quirks at tiny sizes (docs/spec.md "The paper variant"). */
class PaperTest {
  private def paperRecord(args: String*): RunResult = {
    val r = run(args)
    assertEquals(0L, r.code, s"exit code; stderr: ${r.stderr}")
    val errs = errors(recordSchema, r.json)
    assertTrue(errs.isEmpty, s"schema errors $errs in ${r.stdout}")
    assertTrue(r.json.at("/validation/ok").asBoolean)
    r
  }

  @Test def pingpingPaperClonesOnTheDefaultDispatcher(): Unit = {
    val j = paperRecord("pingping", "--message-bytes", "300", "--repetitions", "200", "--variant", "paper").json
    assertEquals("clone", j.at("/knobs/send").asText)
    assertEquals("default", j.at("/knobs/dispatcher").asText)
    assertEquals(8L, j.at("/runtime/schedulers").asLong) // the reference sizing's minimum, whatever the cores
    assertTrue(j.at("/metrics/reported_elapsed_s").isNumber)
  }

  @Test def spawnPaperReportsTheLoopInMilliseconds(): Unit = {
    val j = paperRecord("spawn", "--processes", "500", "--variant", "paper").json
    val ms = j.at("/metrics/reported_elapsed_s").asDouble * 1000
    assertEquals(math.round(ms).toDouble, ms, 1e-6)
    assertEquals(j.at("/metrics/all_ready_s").asDouble, j.at("/metrics/true_elapsed_s").asDouble, 0.0)
  }

  @Test def spawnPropsPerSpawnBuildsOnePropsPerActor(): Unit = {
    val p = paperRecord("spawn", "--processes", "500", "--variant", "paper").json
    assertEquals("per_spawn", p.at("/knobs/props").asText)
    val m = paperRecord("spawn", "--processes", "500", "--variant", "mixed", "--props", "per_spawn").json
    assertEquals("per_spawn", m.at("/knobs/props").asText)
    assertEquals("per_spawn", m.at("/params/props").asText) // given on the command line
    assertEquals("sized", m.at("/knobs/dispatcher").asText)
    assertEquals(500L, m.at("/validation/ready").asLong)
  }

  @Test def throughputPaperCountsWholeBatchesOrNothing(): Unit = {
    val j = paperRecord("throughput", "--pairs", "2", "--message-bytes", "100", "--duration-s", "0.2",
      "--variant", "paper").json
    assertEquals(1000L, j.at("/metrics/batch_size").asLong)
    if (j.at("/metrics/reported_printed").asBoolean) {
      val rep = j.at("/metrics/reported_exchanges").asLong
      assertEquals(0L, rep % 1000)
      assertTrue(rep <= j.at("/metrics/true_exchanges").asLong)
    } else assertTrue(j.at("/metrics/reported_exchanges").isNull)
    assertEquals(j.at("/metrics/exchanges").asLong, j.at("/metrics/true_exchanges").asLong)
  }

  @Test def knobRefusals(): Unit = {
    val a = run(Seq("pingping", "--message-bytes", "5", "--repetitions", "5", "--variant", "mixed", "--match", "bound"))
    assertEquals((2, "", s"error: --match is not a knob of ${Main.Language} pingping (only erlang)\n"), (a.code, a.stdout, a.stderr))
    val b = run(Seq("spawn", "--processes", "5", "--dispatcher", "default"))
    assertEquals((2, "", "error: --dispatcher default contradicts --variant fair (fair means sized; use --variant mixed)\n"),
      (b.code, b.stdout, b.stderr))
  }
}
