//! The JSON records (spec/native-record.schema.json; the conformance suite validates real
//! output against it). Units are in field names; what cannot be measured is null.

use crate::bench::pingping::PingpingResult;
use crate::bench::spawn::SpawnResult;
use crate::bench::throughput::ThroughputResult;
use crate::cli::{Config, LANGUAGE};
use serde_json::{Value, json};

pub const PROGRAM: &str = "serverbench";
pub const PROGRAM_VERSION: &str = "0.1.0";

/// What the runtime really uses: worker threads as the running runtime reports them.
pub fn runtime() -> Value {
    let workers = tokio::runtime::Handle::try_current()
        .map(|h| h.metrics().num_workers())
        .unwrap_or(1);
    json!({
        "name": "tokio",
        "version": format!("{} (rustc {})", env!("SERVERBENCH_TOKIO_VERSION"), env!("SERVERBENCH_RUSTC_VERSION")),
        "schedulers": workers,
    })
}

pub fn version() -> Value {
    json!({"program": PROGRAM, "program_version": PROGRAM_VERSION, "language": LANGUAGE, "runtime": runtime()})
}

fn per_unit(total: f64, n: i64) -> f64 {
    if n == 0 { 0.0 } else { total / n as f64 }
}

pub fn pingping(cfg: &Config, r: &PingpingResult) -> (Value, bool) {
    let reps = cfg.int("repetitions");
    let msgs = 2 * reps;
    let ok = r.received_a == reps && r.received_b == reps && r.payload_errors == 0;
    let rec = json!({
        "benchmark": "pingping", "language": LANGUAGE, "variant": cfg.variant,
        "params": {"message_bytes": cfg.int("message_bytes"), "repetitions": reps, "payload": cfg.str("payload")},
        "metrics": {
            "elapsed_s": r.elapsed.as_secs_f64(),
            "messages": msgs,
            "ns_per_message": per_unit(r.elapsed.as_nanos() as f64, msgs),
        },
        "validation": {"ok": ok, "received_a": r.received_a, "received_b": r.received_b, "payload_errors": r.payload_errors},
        "runtime": runtime(),
    });
    (rec, ok)
}

pub fn spawn(cfg: &Config, r: &SpawnResult) -> (Value, bool) {
    let n = cfg.int("processes");
    let bpp = match (r.rss_before, r.rss_after) {
        (Some(a), Some(b)) => json!(per_unit((b - a) as f64, n)),
        _ => Value::Null,
    };
    let ok = r.ready == n;
    let rec = json!({
        "benchmark": "spawn", "language": LANGUAGE, "variant": cfg.variant,
        "params": {"processes": n},
        "metrics": {
            "spawn_call_s": r.spawn_call.as_secs_f64(),
            "all_ready_s": r.all_ready.as_secs_f64(),
            "rss_bytes_before": r.rss_before,
            "rss_bytes_after": r.rss_after,
            "bytes_per_process": bpp,
            // tokio keeps no account of its tasks' memory (no allocator statistics)
            "runtime_memory_bytes": null,
        },
        "validation": {"ok": ok, "ready": r.ready},
        "runtime": runtime(),
    });
    (rec, ok)
}

pub fn throughput(cfg: &Config, r: &ThroughputResult) -> (Value, bool) {
    let el = r.elapsed.as_secs_f64();
    let per_s = if el > 0.0 {
        r.reported_exchanges as f64 / el
    } else {
        0.0
    };
    let ok = r.reported_exchanges == r.counted_exchanges
        && r.payload_errors == 0
        && r.min_pair_exchanges >= 1
        && r.reported_exchanges > 0;
    let rec = json!({
        "benchmark": "throughput", "language": LANGUAGE, "variant": cfg.variant,
        "params": {
            "pairs": cfg.int("pairs"), "message_bytes": cfg.int("message_bytes"),
            "duration_s": cfg.num("duration_s"), "report_every": cfg.int("report_every"),
            "payload": cfg.str("payload"),
        },
        "metrics": {
            "exchanges": r.reported_exchanges,
            "elapsed_s": el,
            "exchanges_per_s": per_s,
            "paper_msgs_per_min": per_s * 60.0,
            "samples": r.samples,
        },
        "validation": {
            "ok": ok,
            "reported_exchanges": r.reported_exchanges,
            "counted_exchanges": r.counted_exchanges,
            "payload_errors": r.payload_errors,
            "min_pair_exchanges": r.min_pair_exchanges,
        },
        "runtime": runtime(),
    });
    (rec, ok)
}
