//! The one JSON record of a run (spec/native-record.schema.json, $defs.im_client) and the
//! validity rule: the run is invalid when the generator, not the server, may have set the
//! pace (its CPU share of the measured window at or above generator_cpu_limit, or its
//! schedule slip p99 above schedule_slip_limit_s), or when a phase before the schedule did
//! not finish. Lost messages are counted, not judged here: whether a loss is the server's
//! failure depends on the server's chaos setting, which the analysis knows.

use crate::cli::{LANGUAGE, Val};
use crate::run::Outcome;
use crate::setup::Mode;
use hdrhistogram::Histogram;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub const PROGRAM: &str = "serverbench";
pub const PROGRAM_VERSION: &str = "0.1.0";

pub fn runtime() -> Value {
    json!({"name": "rust", "version": env!("SERVERBENCH_RUSTC_VERSION"), "schedulers": 1})
}

pub fn version() -> Value {
    json!({"program": PROGRAM, "program_version": PROGRAM_VERSION, "language": LANGUAGE, "runtime": runtime()})
}

/// The spec's two limits the validity rule applies.
pub struct Limits {
    pub cpu_share: f64,
    /// the shortest window the CPU share judges: the kernel may count CPU time in ticks
    /// (4-10 ms), so a share over a few milliseconds (a small login) says nothing
    pub cpu_min_window_s: f64,
    pub slip_s: f64,
}

fn quantile_s(h: &Histogram<u64>, q: f64) -> Value {
    if h.is_empty() {
        Value::Null
    } else {
        json!(h.value_at_quantile(q) as f64 * 1e-9)
    }
}

/// Why the run is invalid, or None: a setup that did not finish first (no schedule ran),
/// then the generator's two limits.
pub fn invalid_reason(mode: Mode, clients: usize, o: &Outcome, limits: &Limits) -> Option<String> {
    let share = if o.window_s > 0.0 {
        o.window_cpu_s / o.window_s
    } else {
        0.0
    };
    let slip_p99 = if o.slip_ns.is_empty() {
        0.0
    } else {
        o.slip_ns.value_at_quantile(0.99) as f64 * 1e-9
    };
    let needs_all = matches!(mode, Mode::Latency | Mode::Fanout);
    if needs_all && o.registered < clients {
        return Some(format!(
            "setup: {} of {clients} clients registered within --timeout-s",
            o.registered
        ));
    }
    if mode == Mode::Fanout && o.joined < o.registered {
        return Some(format!(
            "setup: {} of {} clients joined their channel within --timeout-s",
            o.joined, o.registered
        ));
    }
    if o.window_s >= limits.cpu_min_window_s && share >= limits.cpu_share {
        return Some(format!(
            "generator CPU share {share:.3} of the measured window >= generator_cpu_limit {}: the generator may have set the pace",
            limits.cpu_share
        ));
    }
    if slip_p99 > limits.slip_s {
        return Some(format!(
            "generator schedule slip p99 {slip_p99:.6} s > schedule_slip_limit_s {}: sends left late",
            limits.slip_s
        ));
    }
    None
}

fn param_json(v: &Val) -> Value {
    match v {
        Val::Int(i) => json!(i),
        Val::Num(x) => json!(x),
        Val::Text(t) => json!(t),
    }
}

/// The record: the params as parsed (but the port, which the harness chose and records
/// itself) and the metrics of the outcome.
pub fn record(variant: &str, params: &BTreeMap<String, Val>, mode: Mode, o: &Outcome, limits: &Limits) -> Value {
    let reason = invalid_reason(mode, params_clients(params), o, limits);
    let p: Map<String, Value> = params
        .iter()
        .filter(|(k, _)| k.as_str() != "port")
        .map(|(k, v)| (k.clone(), param_json(v)))
        .collect();
    let (u, s) = crate::os::cpu_s();
    let l = &o.ledger;
    let share = if o.window_s > 0.0 {
        o.window_cpu_s / o.window_s
    } else {
        0.0
    };
    let per_message = match o.messaging_cpu_s {
        Some(c) if o.sent + l.delivered > 0 => json!(c / (o.sent + l.delivered) as f64),
        _ => Value::Null,
    };
    let deliveries_per_s = match o.schedule_s {
        Some(t) if t > 0.0 => json!(l.delivered as f64 / t),
        _ => Value::Null,
    };
    let latency_mean = if l.latency_ns.is_empty() {
        Value::Null
    } else {
        json!(l.latency_ns.mean() * 1e-9)
    };
    json!({
        "benchmark": "im",
        "role": "client",
        "language": LANGUAGE,
        "variant": variant,
        "params": p,
        "metrics": {
            "elapsed_s": o.elapsed_s,
            "clients_connected": o.connected,
            "clients_registered": o.registered,
            "registration_failures": o.failed,
            "login_s": o.login_s,
            "channels_joined": o.joined,
            "schedule_s": o.schedule_s,
            "messages_scheduled": o.scheduled,
            "messages_sent": o.sent,
            "deliveries_expected": l.expected,
            "messages_delivered": l.delivered,
            "messages_lost": l.lost(),
            "messages_duplicated": l.duplicated,
            "messages_reordered": l.reordered,
            "deliveries_per_s": deliveries_per_s,
            "latency_p50_s": quantile_s(&l.latency_ns, 0.5),
            "latency_p90_s": quantile_s(&l.latency_ns, 0.9),
            "latency_p99_s": quantile_s(&l.latency_ns, 0.99),
            "latency_p999_s": quantile_s(&l.latency_ns, 0.999),
            "latency_max_s": quantile_s(&l.latency_ns, 1.0),
            "latency_mean_s": latency_mean,
            "schedule_slip_p99_s": quantile_s(&o.slip_ns, 0.99),
            "schedule_slip_max_s": quantile_s(&o.slip_ns, 1.0),
            "pings_answered": o.pings,
            "error_numerics": o.error_numerics,
            "server_disconnects": o.server_disconnects,
            "client_cpu_user_s": u,
            "client_cpu_system_s": s,
            "client_cpu_share": share,
            "client_cpu_per_message_s": per_message,
            "generator_cpu_limit": limits.cpu_share,
            "schedule_slip_limit_s": limits.slip_s,
            "warmup_messages_scheduled": o.warmup_scheduled,
            "warmup_messages_sent": o.warmup_sent,
            "warmup_deliveries_expected": l.warmup_expected,
            "warmup_messages_delivered": l.warmup_delivered,
        },
        "validation": {"ok": reason.is_none(), "reason": reason},
        "runtime": runtime(),
    })
}

fn params_clients(params: &BTreeMap<String, Val>) -> usize {
    match params.get("clients") {
        Some(Val::Int(n)) => *n as usize,
        _ => 0,
    }
}
