//! serverbench's IM load generator (docs/im.md): `serverbench-im-loadgen im client ...`
//! connects IRC clients to a server on 127.0.0.1 and measures it in one of four modes,
//! then prints one JSON record (spec/native-record.schema.json, $defs.im_client).
//! `serverbench-im-loadgen im server ...` is the null sink (sink.rs): the least server the
//! generator's modes need, against which a sweep certifies the generator's capacity.

// the record's json! literal has more fields than serde_json's macro recurses through by default
#![recursion_limit = "256"]

mod cli;
mod conn;
mod irc;
mod lines;
mod os;
mod pace;
mod record;
mod run;
mod send;
mod setup;
mod sink;
mod sink_conn;
mod stats;
mod track;

#[cfg(test)]
mod parser_cases;

use cli::{Action, Val};
use run::Gen;
use setup::{Mode, Setup};
use std::collections::BTreeMap;
use std::process::exit;

const EXIT_OK: i32 = 0;
const EXIT_INVALID: i32 = 1;
const EXIT_USAGE: i32 = 2;

fn int(p: &BTreeMap<String, Val>, k: &str) -> i64 {
    match p.get(k) {
        Some(Val::Int(v)) => *v,
        other => panic!("param {k} is not an int: {other:?}"),
    }
}

fn num(p: &BTreeMap<String, Val>, k: &str) -> f64 {
    match p.get(k) {
        Some(Val::Num(v)) => *v,
        Some(Val::Int(v)) => *v as f64,
        other => panic!("param {k} is not a number: {other:?}"),
    }
}

fn text<'a>(p: &'a BTreeMap<String, Val>, k: &str) -> &'a str {
    match p.get(k) {
        Some(Val::Text(v)) => v,
        other => panic!("param {k} is not an enum: {other:?}"),
    }
}

/// The run a parsed command line asks for, or the usage error that the flags' ranges
/// alone cannot express (pairs need an even --clients, channels a multiple of their size).
pub fn setup_of(spec: &serde_json::Value, p: &BTreeMap<String, Val>) -> Result<Setup, String> {
    let mode = match text(p, "mode") {
        "latency" => Mode::Latency,
        "idle" => Mode::Idle,
        "login" => Mode::Login,
        _ => Mode::Fanout,
    };
    let (clients, k) = (int(p, "clients") as usize, int(p, "channel_size") as usize);
    if mode == Mode::Latency && clients % 2 != 0 {
        return Err(format!(
            "--clients {clients}: latency mode pairs clients 2k <-> 2k+1, so it must be even"
        ));
    }
    if mode == Mode::Fanout && clients % k != 0 {
        return Err(format!(
            "--clients {clients}: fanout mode needs a multiple of --channel-size {k}"
        ));
    }
    Ok(Setup {
        mode,
        clients,
        rate_per_s: num(p, "rate_per_s"),
        poisson: text(p, "schedule") == "poisson",
        warmup_s: num(p, "warmup_s"),
        duration_s: num(p, "duration_s"),
        drain_s: num(p, "drain_s"),
        seed: int(p, "seed") as u64,
        channel_size: k,
        payload_bytes: int(p, "payload_bytes") as usize,
        timeout_s: num(p, "client_timeout_s"),
        port: int(p, "port") as u16,
        login_concurrency: if mode == Mode::Login {
            cli::im_number(spec, "login_concurrency") as usize
        } else {
            int(p, "setup_concurrency") as usize
        },
        ks_gaps: cli::im_number(spec, "inter_send_ks_gaps") as usize,
    })
}

/// What a run asks for: the generator's setup (role client) or the sink's (role server).
pub enum Job {
    Client(Setup),
    Server(sink::SinkSetup),
}

/// What main does before anything touches the network: the parsed action, or a usage error.
pub fn command_line(spec: &serde_json::Value, args: &[String]) -> Result<(Action, Option<Job>), String> {
    match cli::parse(spec, args)? {
        Action::Run { role, variant, params } => {
            let job = if role == "server" {
                Job::Server(sink::setup_of(&params)?)
            } else {
                Job::Client(setup_of(spec, &params)?)
            };
            Ok((Action::Run { role, variant, params }, Some(job)))
        }
        other => Ok((other, None)),
    }
}

fn main() {
    let spec = cli::spec();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (action, setup) = match command_line(&spec, &args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            exit(EXIT_USAGE);
        }
    };
    let (variant, params, setup) = match (action, setup) {
        (Action::Version, _) => {
            println!("{}", record::version());
            exit(EXIT_OK);
        }
        (Action::Help, _) => {
            print!("{}", cli::usage(&spec));
            exit(EXIT_OK);
        }
        (Action::Run { variant, params, .. }, Some(Job::Client(setup))) => (variant, params, setup),
        (Action::Run { variant, params, .. }, Some(Job::Server(setup))) => {
            exit(match sink::serve(&variant, &params, setup) {
                Ok(()) => EXIT_OK,
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_INVALID
                }
            })
        }
        (Action::Run { .. }, None) => unreachable!("a run always has its setup"),
    };
    let level = cli::im_number(&spec, "latency_p99_ci_level");
    let limits = record::Limits {
        busy_share: cli::im_number(&spec, "generator_busy_limit"),
        slip_s: cli::im_number(&spec, "schedule_slip_limit_s"),
        read_lateness_s: cli::im_number(&spec, "read_lateness_limit_s"),
        p99_ci_level: level,
        p99_ci_min: stats::min_samples(0.99, level),
        ks_alpha: cli::im_number(&spec, "inter_send_ks_alpha"),
    };
    os::raise_open_files();
    let mode = setup.mode;
    let outcome = match Gen::new(setup) {
        Ok(g) => g.run(),
        Err(e) => {
            eprintln!("error: cannot start the poll: {e}");
            exit(EXIT_INVALID);
        }
    };
    let rec = record::record(&variant, &params, mode, &outcome, &limits);
    println!("{rec}");
    exit(if rec["validation"]["ok"] == serde_json::Value::Bool(true) {
        EXIT_OK
    } else {
        EXIT_INVALID
    });
}
