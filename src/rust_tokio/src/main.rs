//! serverbench for rust_tokio: the contract of docs/spec.md on tokio's multi-threaded
//! runtime. Worker threads are never a flag: TOKIO_WORKER_THREADS=C (spec/cli.json
//! languages.rust_tokio.env), which tokio itself reads; runtime.schedulers reports what
//! the runtime really runs.

mod bench;
mod cli;
mod echo;
mod im;
#[cfg(test)]
mod parser_cases;
mod record;
mod sockserver;

use serde_json::Value;
use std::io::Write;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = run(&args);
    // Exit at once, as Go and Erlang do: dropping a runtime with a million dormant tasks
    // would only add time the harness measures.
    std::process::exit(code);
}

/// The command line's part of run, before any runtime starts: --help is written to out
/// and a usage error to err as its one "error: " line, each ending the program with the
/// code in Err. Otherwise returns what is left to do: Version or Run, never Help.
fn command_line(spec: &Value, args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> Result<cli::Action, i32> {
    let accepted = cli::parse(spec, args).and_then(|action| match &action {
        cli::Action::Run(cfg) => cli::refuse_knobs(spec, cfg).map(|()| action),
        _ => Ok(action),
    });
    // A failed write panics with print!'s and eprintln!'s message, as those calls did here.
    match accepted {
        Err(e) => {
            writeln!(err, "error: {e}").unwrap_or_else(|e| panic!("failed printing to stderr: {e}"));
            Err(cli::EXIT_USAGE)
        }
        Ok(cli::Action::Help) => {
            write!(out, "{}", cli::usage(spec)).unwrap_or_else(|e| panic!("failed printing to stdout: {e}"));
            Err(cli::EXIT_OK)
        }
        Ok(action) => Ok(action),
    }
}

fn run(args: &[String]) -> i32 {
    let spec = cli::spec();
    let cfg = match command_line(&spec, args, &mut std::io::stdout(), &mut std::io::stderr()) {
        Err(code) => return code,
        Ok(cli::Action::Version) => {
            return runtime_or_error().map_or(cli::EXIT_RUN_FAILED, |rt| {
                emit(&rt.block_on(async { record::version() }), true)
            });
        }
        Ok(cli::Action::Run(cfg)) => cfg,
        Ok(cli::Action::Help) => unreachable!("command_line prints --help itself"),
    };
    let Some(rt) = runtime_or_error() else {
        return cli::EXIT_RUN_FAILED;
    };
    if cfg.benchmark == "echo_flood" || cfg.benchmark == "im" {
        // the server role (the only one cli.json lists for rust_tokio); its own task too
        let res = rt.block_on(async move {
            tokio::spawn(async move {
                if cfg.benchmark == "im" {
                    im::serve(&cfg, &spec).await
                } else {
                    echo::serve(&cfg).await
                }
            })
            .await
        });
        return match res {
            Ok(Ok(rec)) => emit(&rec, true),
            Ok(Err(e)) => {
                eprintln!("error: {e}");
                cli::EXIT_RUN_FAILED
            }
            Err(e) => {
                eprintln!("error: the server task failed: {e}");
                cli::EXIT_RUN_FAILED
            }
        };
    }
    // The benchmark's main process is a task on a worker, as Go's main goroutine is on a P.
    let (rec, ok) = rt.block_on(async move {
        tokio::spawn(async move {
            match cfg.benchmark.as_str() {
                "pingping" => {
                    let r = bench::pingping::pingping(
                        cfg.int("message_bytes") as usize,
                        cfg.int("repetitions"),
                        cfg.str("payload") == "copy",
                    )
                    .await;
                    record::pingping(&cfg, &r)
                }
                "spawn" => {
                    let r = bench::spawn::spawn(cfg.int("processes")).await;
                    record::spawn(&cfg, &r)
                }
                "throughput" => {
                    let d = Duration::from_secs_f64(cfg.num("duration_s"));
                    let r = bench::throughput::throughput(
                        cfg.int("pairs") as usize,
                        cfg.int("message_bytes") as usize,
                        d,
                        cfg.int("report_every"),
                        cfg.str("payload") == "copy",
                    )
                    .await;
                    record::throughput(&cfg, &r)
                }
                other => unreachable!("{other} is listed for rust_tokio in cli.json but not built in"),
            }
        })
        .await
        .expect("benchmark task")
    });
    emit(&rec, ok)
}

/// The multi-threaded runtime; TOKIO_WORKER_THREADS is checked here so that a bad value
/// is one error line (exit 1) rather than tokio's panic.
fn runtime_or_error() -> Option<tokio::runtime::Runtime> {
    if let Ok(v) = std::env::var("TOKIO_WORKER_THREADS")
        && v.parse::<usize>().map_or(true, |n| n == 0)
    {
        eprintln!("error: TOKIO_WORKER_THREADS={v:?} is not a positive integer");
        return None;
    }
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("error: cannot start the tokio runtime: {e}");
            None
        }
    }
}

fn emit(v: &Value, ok: bool) -> i32 {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{v}").and_then(|_| out.flush()).is_err() {
        eprintln!("error: writing record");
        return cli::EXIT_RUN_FAILED;
    }
    if !ok {
        eprintln!("validation failed: see the record's validation object");
        return cli::EXIT_RUN_FAILED;
    }
    cli::EXIT_OK
}
