package serverbench.jvm;

import java.util.List;

/**
 * What a throughput implementation hands back (docs/spec.md "throughput"): the clock's
 * length (start signal to the last final report), the aggregator's total (reports plus
 * remainders), the servers' own counts summed, the smallest pair's count, payload check
 * failures, and the aggregator's samples {@code [t_s, cumulative]}.
 */
public record ThroughputResult(long elapsedNs, long reported, long counted, long minPair, long payloadErrors,
                               List<double[]> samples) {}
