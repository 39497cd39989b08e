package serverbench.jvm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The spawn and throughput parts of a record, field for field those of the Scala/Akka
 * program (Spawn.scala, Throughput.scala, fair variant), so that records of every JVM
 * language compare one to one.
 */
final class Records {
    private Records() {}

    static boolean spawn(Language lang, Cli.Run run, ObjectNode line) throws Exception {
        int n = Math.toIntExact(run.intParam("processes"));
        SpawnResult r = lang.spawn(n);
        boolean ok = r.ready() == n;
        line.putObject("params").put("processes", n);
        ObjectNode m = line.putObject("metrics");
        m.put("spawn_call_s", r.spawnCallNs() / 1e9);
        m.put("all_ready_s", r.allReadyNs() / 1e9);
        putOpt(m, "rss_bytes_before", r.rssBefore());
        putOpt(m, "rss_bytes_after", r.rssAfter());
        if (r.rssBefore() == null || r.rssAfter() == null) {
            m.putNull("bytes_per_process");
        } else {
            m.put("bytes_per_process", (double) (r.rssAfter() - r.rssBefore()) / n);
        }
        m.put("runtime_memory_bytes", r.heapUsed());
        ObjectNode v = line.putObject("validation");
        v.put("ok", ok);
        v.put("ready", r.ready());
        return ok;
    }

    static boolean throughput(Language lang, Cli.Run run, ObjectNode line) throws Exception {
        int pairs = Math.toIntExact(run.intParam("pairs"));
        int bytes = Math.toIntExact(run.intParam("message_bytes"));
        double durationS = run.numberParam("duration_s");
        long k = run.intParam("report_every");
        boolean copy = run.stringParam("payload").equals("copy");
        ThroughputResult r = lang.throughput(pairs, bytes, durationS, k, copy);

        boolean ok = r.reported() == r.counted() && r.payloadErrors() == 0 && r.minPair() >= 1;
        double elapsedS = r.elapsedNs() / 1e9;
        double perS = r.reported() / elapsedS;
        ObjectNode p = line.putObject("params");
        p.put("pairs", pairs);
        p.put("message_bytes", bytes);
        p.put("duration_s", durationS);
        p.put("report_every", k);
        p.put("payload", copy ? "copy" : "share");
        ObjectNode m = line.putObject("metrics");
        m.put("exchanges", r.reported());
        m.put("elapsed_s", elapsedS);
        m.put("exchanges_per_s", perS);
        m.put("paper_msgs_per_min", perS * 60);
        ArrayNode samples = m.putArray("samples");
        for (double[] s : r.samples()) {
            samples.addArray().add(Math.max(0.0, s[0])).add((long) s[1]);
        }
        ObjectNode v = line.putObject("validation");
        v.put("ok", ok);
        v.put("reported_exchanges", r.reported());
        v.put("counted_exchanges", r.counted());
        v.put("payload_errors", r.payloadErrors());
        v.put("min_pair_exchanges", r.minPair());
        return ok;
    }

    private static void putOpt(ObjectNode o, String name, Long value) {
        if (value == null) {
            o.putNull(name);
        } else {
            o.put(name, value);
        }
    }
}
