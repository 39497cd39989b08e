package serverbench.jvm;

/** What a spawn implementation hands back (docs/spec.md "spawn"); RSS null where unknown. */
public record SpawnResult(long spawnCallNs, long allReadyNs, Long rssBefore, Long rssAfter, long heapUsed, long ready) {}
