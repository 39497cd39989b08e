package serverbench

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import Rt.Converters._

import TestSupport._

class RecordTest {
  private def validRecord(args: String*): RunResult = {
    val r = run(args)
    assertEquals(0L, r.code, s"exit code; stderr: ${r.stderr}")
    assertEquals(1L, r.lines.size, s"stdout must be one line: ${r.stdout}")
    assertTrue(r.stdout.endsWith("\n"))
    val errs = errors(recordSchema, r.json)
    assertTrue(errs.isEmpty, s"schema errors $errs in ${r.stdout}")
    assertEquals(Main.Language, r.json.get("language").asText)
    assertEquals("fair", r.json.get("variant").asText)
    assertEquals(Rt.Name, r.json.at("/runtime/name").asText)
    assertTrue(r.json.at("/validation/ok").asBoolean)
    r
  }

  @Test def pingpingCopyExactCounts(): Unit = {
    val j = validRecord("pingping", "--message-bytes", "300", "--repetitions", "500").json
    assertEquals(500L, j.at("/validation/received_a").asLong)
    assertEquals(500L, j.at("/validation/received_b").asLong)
    assertEquals(0L, j.at("/validation/payload_errors").asLong)
    assertEquals(1000L, j.at("/metrics/messages").asLong)
    assertEquals("copy", j.at("/params/payload").asText)
    val ns = j.at("/metrics/ns_per_message").asDouble
    assertEquals(j.at("/metrics/elapsed_s").asDouble * 1e9 / 1000, ns, ns * 1e-6)
  }

  @Test def pingpingShareAndTinyMessages(): Unit = {
    val j = validRecord("pingping", "--payload=share", "--repetitions=1", "--message-bytes=1").json
    assertEquals(1L, j.at("/validation/received_a").asLong)
    assertEquals(2L, j.at("/metrics/messages").asLong)
    assertEquals("share", j.at("/params/payload").asText)
  }

  @Test def spawnExactCounts(): Unit = {
    val j = validRecord("spawn", "--processes", "2000").json
    assertEquals(2000L, j.at("/validation/ready").asLong)
    assertEquals(2000L, j.at("/params/processes").asLong)
    assertTrue(j.at("/metrics/all_ready_s").asDouble >= j.at("/metrics/spawn_call_s").asDouble)
    assertTrue(j.at("/metrics/rss_bytes_before").isIntegralNumber) // Linux: measured
    assertTrue(j.at("/runtime/max_heap_bytes").asLong > 0)
  }

  private def checkThroughput(j: com.fasterxml.jackson.databind.JsonNode, pairs: Int): Unit = {
    val ex = j.at("/metrics/exchanges").asLong
    assertEquals(ex, j.at("/validation/reported_exchanges").asLong)
    assertEquals(ex, j.at("/validation/counted_exchanges").asLong)
    assertTrue(j.at("/validation/min_pair_exchanges").asLong >= 1)
    assertTrue(ex >= pairs)
    val samples = j.at("/metrics/samples").elements().asScala.toSeq.map(s => (s.get(0).asDouble, s.get(1).asLong))
    assertTrue(samples.nonEmpty)
    assertEquals(ex, samples.last._2, "the final sample holds the total")
    assertEquals(j.at("/metrics/elapsed_s").asDouble, samples.last._1, 1e-9)
    // Samples other than the final one are at least 0.1 s apart (spec/cli.json).
    val minGap = cliJson.get("throughput_sample_min_interval_s").asDouble
    samples.init.sliding(2).filter(_.size == 2).foreach { case Seq(a, b) => assertTrue(b._1 - a._1 >= minGap - 1e-9, s"$a $b") }
    samples.sliding(2).filter(_.size == 2).foreach { case Seq(a, b) => assertTrue(b._2 >= a._2 && b._1 >= a._1) }
    assertEquals(j.at("/metrics/exchanges_per_s").asDouble * 60, j.at("/metrics/paper_msgs_per_min").asDouble, 1e-6 * ex)
  }

  @Test def throughputCopyExactCounts(): Unit = {
    val j = validRecord("throughput", "--pairs", "3", "--message-bytes", "500", "--duration-s", "0.4", "--report-every", "100").json
    checkThroughput(j, 3)
    assertEquals(100L, j.at("/params/report_every").asLong)
    assertEquals(0.4, j.at("/params/duration_s").asDouble, 0.0)
    assertTrue(j.at("/metrics/elapsed_s").asDouble >= 0.4)
  }

  @Test def throughputShareDefaultReportEvery(): Unit = {
    val j = validRecord("throughput", "--duration-s=0.2", "--payload", "share", "--message-bytes", "7", "--pairs", "1").json
    checkThroughput(j, 1)
    assertEquals(10000L, j.at("/params/report_every").asLong) // the default is in the record
    assertEquals("share", j.at("/params/payload").asText)
  }

  @Test def versionValidates(): Unit = {
    val r = run(Seq("--version"))
    assertEquals(0L, r.code)
    assertEquals(1L, r.lines.size)
    val errs = errors(versionSchema, r.json)
    assertTrue(errs.isEmpty, s"schema errors $errs in ${r.stdout}")
    assertEquals("serverbench", r.json.get("program").asText)
    assertEquals(Main.Language, r.json.get("language").asText)
    assertTrue(r.json.at("/runtime/version").asText.contains(TestRt.VersionMarker))
  }

  @Test def helpExitsZero(): Unit = {
    val r = run(Seq("--help"))
    assertEquals(0L, r.code)
    assertTrue(r.stdout.contains("usage"))
  }

  /** The validator is not vacuous: broken records are refused. */
  @Test def schemaRejectsBrokenRecords(): Unit = {
    val good = mapper.readTree(run(Seq("pingping", "--message-bytes", "10", "--repetitions", "3")).stdout)
    assertTrue(errors(recordSchema, good).isEmpty)
    def broken(f: com.fasterxml.jackson.databind.node.ObjectNode => Unit): Unit = {
      val b = good.deepCopy[com.fasterxml.jackson.databind.node.ObjectNode]()
      f(b)
      assertFalse(errors(recordSchema, b).isEmpty, s"accepted $b")
    }
    broken(_.remove("metrics"))
    broken(_.put("extra", 1))
    broken(_.put("language", "cobol"))
    broken(_.get("validation").asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].put("received_a", -1))
    broken(_.get("runtime").asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].put("schedulers", 0))
    broken(_.get("metrics").asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].put("messages", "2"))
    assertFalse(errors(versionSchema, good).isEmpty, "a run record is not a version_info")
  }
}
