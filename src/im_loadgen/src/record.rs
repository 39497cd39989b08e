//! The one JSON record of a run (spec/native-record.schema.json, $defs.im_client) and the
//! validity rule: the run is invalid when the generator, not the server, may have set the
//! pace (its loop's busy share of the measured window at or above generator_busy_limit, its
//! schedule slip p99 above schedule_slip_limit_s, or its read lateness p99 above
//! read_lateness_limit_s: pace.rs), when a phase before the schedule did not finish, or when
//! too few latencies were timed for the p99's interval (stats.rs). Lost messages are
//! counted, not judged here: whether a loss is the server's failure depends on the server's
//! chaos setting, which the analysis knows. The inter-send gaps' KS test is recorded, not
//! judged (docs/im.md says why).

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

/// The spec's limits the validity rule applies, and the self-checks' settings.
pub struct Limits {
    pub busy_share: f64,
    pub slip_s: f64,
    pub read_lateness_s: f64,
    /// the p99's interval's level (0.95), and the fewest latencies that have one
    pub p99_ci_level: f64,
    pub p99_ci_min: u64,
    pub ks_alpha: f64,
}

fn quantile_s(h: &Histogram<u64>, q: f64) -> Value {
    if h.is_empty() {
        Value::Null
    } else {
        json!(h.value_at_quantile(q) as f64 * 1e-9)
    }
}

fn p99_s(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(0.99) as f64 * 1e-9
    }
}

/// Why the run is invalid, or None: a setup that did not finish (alone: no schedule ran),
/// else every rule broken, joined by "; ": the generator's three limits first (so that a
/// run the generator limited has a reason starting with "generator"), then the latency
/// sample's size.
pub fn invalid_reason(mode: Mode, clients: usize, o: &Outcome, limits: &Limits) -> Option<String> {
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
    let mut why = Vec::new();
    if o.busy_share >= limits.busy_share {
        why.push(format!(
            "generator busy share {:.3} of the measured window >= generator_busy_limit {}: the generator may have set the pace",
            o.busy_share, limits.busy_share
        ));
    }
    let slip_p99 = p99_s(&o.slip_ns);
    if slip_p99 > limits.slip_s {
        why.push(format!(
            "generator schedule slip p99 {slip_p99:.6} s > schedule_slip_limit_s {}: sends left late",
            limits.slip_s
        ));
    }
    // Judged where a latency is measured, as the slip is: in a login storm or an idle hold the
    // loop's turns carry thousands of connects and registrations, and a late read there delays
    // no timed delivery (the login time is judged by the busy share).
    let late_p99 = p99_s(&o.lateness_ns);
    if needs_all && late_p99 > limits.read_lateness_s {
        why.push(format!(
            "generator read lateness p99 {late_p99:.6} s > read_lateness_limit_s {}: arrivals read late",
            limits.read_lateness_s
        ));
    }
    let timed = o.ledger.latency_ns.len();
    if needs_all && timed < limits.p99_ci_min {
        why.push(format!(
            "latency sample too small: {timed} latencies timed, the p99's {} interval needs {}",
            limits.p99_ci_level, limits.p99_ci_min
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
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
    let ci = crate::stats::quantile_ranks(l.latency_ns.len(), 0.99, limits.p99_ci_level);
    let ci_s = |k: Option<u64>| {
        k.map_or(Value::Null, |k| {
            json!(crate::stats::nth_value(&l.latency_ns, k) as f64 * 1e-9)
        })
    };
    let ks = o
        .gaps
        .as_ref()
        .filter(|_| params_text(params, "schedule") == "poisson")
        .and_then(|g| crate::stats::ks_exponential(&g.gaps_ns, params_num(params, "rate_per_s"), limits.ks_alpha));
    let busy_per_message = match o.messaging_busy_s {
        Some(b) if o.sent + l.delivered > 0 => json!(b / (o.sent + l.delivered) as f64),
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
            "setup_reconnects": o.setup_reconnects,
            "client_cpu_user_s": u,
            "client_cpu_system_s": s,
            "client_cpu_share": share,
            "client_cpu_per_message_s": per_message,
            "client_involuntary_switches": crate::os::involuntary_switches(),
            "client_busy_share": o.busy_share,
            "client_busy_per_message_s": busy_per_message,
            "generator_busy_limit": limits.busy_share,
            "schedule_slip_limit_s": limits.slip_s,
            "read_lateness_p99_s": quantile_s(&o.lateness_ns, 0.99),
            "read_lateness_max_s": quantile_s(&o.lateness_ns, 1.0),
            "read_lateness_limit_s": limits.read_lateness_s,
            "latency_p99_ci_low_s": ci_s(ci.map(|c| c.0)),
            "latency_p99_ci_high_s": ci_s(ci.map(|c| c.1)),
            "latency_p99_ci_level": limits.p99_ci_level,
            "latency_p99_ci_min_deliveries": limits.p99_ci_min,
            "inter_send_ks_d": ks.map(|k| k.0),
            "inter_send_ks_gaps": ks.map_or(0, |k| k.1),
            "inter_send_ks_critical": ks.map(|k| k.2),
            "inter_send_ks_alpha": limits.ks_alpha,
            "inter_send_ks_ok": ks.map(|k| k.0 <= k.2),
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

fn params_text<'a>(params: &'a BTreeMap<String, Val>, k: &str) -> &'a str {
    match params.get(k) {
        Some(Val::Text(t)) => t,
        _ => "",
    }
}

fn params_num(params: &BTreeMap<String, Val>, k: &str) -> f64 {
    match params.get(k) {
        Some(Val::Num(x)) => *x,
        Some(Val::Int(i)) => *i as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::{Ledger, histogram};

    fn outcome(lateness_ns: u64) -> Outcome {
        let mut ledger = Ledger::new(2, 1);
        let mut late = histogram();
        for _ in 0..1000 {
            late.saturating_record(lateness_ns);
            ledger.latency_ns.saturating_record(1_000);
        }
        Outcome {
            elapsed_s: 1.0,
            connected: 2,
            registered: 2,
            failed: 0,
            login_s: Some(0.1),
            joined: 0,
            schedule_s: Some(1.0),
            scheduled: 1000,
            sent: 1000,
            warmup_scheduled: 0,
            warmup_sent: 0,
            ledger,
            slip_ns: histogram(),
            pings: 0,
            error_numerics: 0,
            server_disconnects: 0,
            setup_reconnects: 0,
            window_cpu_s: 0.1,
            window_s: 1.0,
            messaging_cpu_s: Some(0.1),
            busy_share: 0.1,
            messaging_busy_s: Some(0.1),
            lateness_ns: late,
            gaps: None,
        }
    }

    const LIMITS: Limits = Limits {
        busy_share: 0.9,
        slip_s: 0.002,
        read_lateness_s: 0.002,
        p99_ci_level: 0.95,
        p99_ci_min: 368,
        ks_alpha: 0.01,
    };

    #[test]
    fn reads_later_than_the_limit_make_the_run_the_generators_and_only_in_latency_modes() {
        assert_eq!(invalid_reason(Mode::Latency, 2, &outcome(100_000), &LIMITS), None);
        let why = invalid_reason(Mode::Latency, 2, &outcome(5_000_000), &LIMITS).expect("invalid");
        assert!(why.starts_with("generator read lateness p99"), "{why}");
        assert_eq!(invalid_reason(Mode::Idle, 2, &outcome(5_000_000), &LIMITS), None);
    }
}
