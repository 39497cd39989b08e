//! The null sink, `serverbench-im-loadgen im server` (docs/im.md, "The null sink"): the
//! least IRC server the generator's four modes need, on one thread and one poll, so that a
//! sweep can certify the generator's capacity against a server that costs nearly nothing.
//! What it answers: sink_conn.rs. The lifecycle is every socket server's (docs/sockets.md):
//! bind 127.0.0.1, print the listening line, stop on stdin's end, a `stop` line, SIGTERM or
//! SIGINT, or --idle-timeout-s with no open connection, then print the im_server record.
//! It has no chat-session or channel processes, so there is nothing for chaos to kill:
//! --chaos-interval-ms must be 0 (a usage error otherwise); --chaos-target, --chaos-pick
//! and --seed are accepted, recorded and unused.

use crate::cli::{LANGUAGE, Val};
use crate::sink_conn::Hub;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, net::TcpListener};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

const LISTENER: Token = Token(usize::MAX - 1);
const STDIN: Token = Token(usize::MAX - 2);
const SIGNALS: Token = Token(usize::MAX - 3);

pub struct SinkSetup {
    pub port: u16,
    pub idle_timeout_s: f64,
    pub sendq_lines: usize,
}

/// The sink's setup, or the usage error of a chaos it cannot do.
pub fn setup_of(p: &BTreeMap<String, Val>) -> Result<SinkSetup, String> {
    let int = |k: &str| match p.get(k) {
        Some(Val::Int(v)) => *v,
        _ => 0,
    };
    let chaos = int("chaos_interval_ms");
    if chaos != 0 {
        return Err(format!(
            "--chaos-interval-ms {chaos}: the null sink ({LANGUAGE} server) has no processes for chaos to kill; only 0 is accepted"
        ));
    }
    let idle_timeout_s = match p.get("idle_timeout_s") {
        Some(Val::Num(x)) => *x,
        Some(Val::Int(v)) => *v as f64,
        _ => 60.0,
    };
    Ok(SinkSetup {
        port: int("port") as u16,
        idle_timeout_s,
        sendq_lines: int("sendq_lines") as usize,
    })
}

/// A listening socket on 127.0.0.1 with the spec's backlog (mio's bind takes 128, too few
/// for a login storm of 256 connects in flight).
fn listen(port: u16, backlog: i32) -> std::io::Result<TcpListener> {
    let l = std::net::TcpListener::bind(("127.0.0.1", port))?;
    // SAFETY: listen on a socket we own; a second listen only changes the backlog.
    if unsafe { libc::listen(l.as_raw_fd(), backlog) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    l.set_nonblocking(true)?;
    Ok(TcpListener::from_std(l))
}

/// SIGTERM and SIGINT as a readable fd (signalfd), after blocking their default action.
fn signal_fd() -> std::io::Result<OwnedFd> {
    // SAFETY: plain signal-set calls on a local set; signalfd returns a new fd or -1.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let fd = libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl flags on a valid descriptor.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Reads what stdin has: Some(reason) when it ended or said `stop`.
fn read_stdin(pending: &mut Vec<u8>) -> Option<&'static str> {
    let mut buf = [0u8; 4096];
    loop {
        match std::io::stdin().lock().read(&mut buf) {
            Ok(0) => return Some("stdin_eof"),
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                while let Some(i) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=i).collect();
                    if line.trim_ascii() == b"stop" {
                        return Some("stop_line");
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None, // WouldBlock: all read
        }
    }
}

/// Serves until told to stop, then prints the record; Err is the one error line (exit 1).
pub fn serve(variant: &str, params: &BTreeMap<String, Val>, setup: SinkSetup) -> Result<(), String> {
    crate::os::raise_open_files();
    let spec = crate::cli::spec();
    let backlog = spec["sockets"]["backlog"].as_i64().unwrap_or(1024) as i32;
    let mut listener =
        listen(setup.port, backlog).map_err(|e| format!("cannot listen on 127.0.0.1 port {}: {e}", setup.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let mut poll = Poll::new().map_err(|e| e.to_string())?;
    let reg = poll.registry();
    reg.register(&mut listener, LISTENER, Interest::READABLE)
        .map_err(|e| e.to_string())?;
    let signals = signal_fd().map_err(|e| e.to_string())?;
    reg.register(&mut SourceFd(&signals.as_raw_fd()), SIGNALS, Interest::READABLE)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut stdin_pending = Vec::new();
    set_nonblocking(0);
    // a regular file or /dev/null cannot be polled (EPERM): read it now, to its end
    let mut reason = match reg.register(&mut SourceFd(&0), STDIN, Interest::READABLE) {
        Ok(()) => None,
        Err(_) => read_stdin(&mut stdin_pending).or(Some("stdin_eof")),
    };
    {
        let mut out = std::io::stdout().lock();
        let line = json!({"event": "listening", "benchmark": "im", "role": "server",
                          "language": LANGUAGE, "address": "127.0.0.1", "port": port});
        let _ = writeln!(out, "{line}").and_then(|_| out.flush());
    }
    let mut hub = Hub::new(setup.sendq_lines);
    let mut events = Events::with_capacity(1024);
    let idle = Duration::from_secs_f64(setup.idle_timeout_s);
    let mut idle_since = Some(Instant::now());
    while reason.is_none() {
        // no open connection: wait at most until the idle timeout; else until an event
        let timeout = idle_since.map(|t| idle.saturating_sub(t.elapsed()));
        if let Err(e) = poll.poll(&mut events, timeout) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("poll failed: {e}"));
            }
        }
        for ev in events.iter() {
            match ev.token() {
                LISTENER => hub.accept_all(&listener, poll.registry()),
                STDIN => reason = reason.or(read_stdin(&mut stdin_pending)),
                SIGNALS => reason = Some("signal"),
                Token(i) => hub.on_ready(
                    i,
                    ev.is_readable() || ev.is_read_closed(),
                    ev.is_writable(),
                    poll.registry(),
                ),
            }
        }
        hub.flush_dirty(poll.registry());
        match (hub.open(), idle_since) {
            (0, None) => idle_since = Some(Instant::now()),
            (0, Some(t)) if t.elapsed() >= idle => reason = reason.or(Some("idle_timeout")),
            (0, Some(_)) => {}
            _ => idle_since = None,
        }
    }
    hub.close_all(poll.registry());
    let rec = record(
        variant,
        params,
        port,
        &hub,
        reason.unwrap_or("stdin_eof"),
        start.elapsed(),
    );
    // a reader that has gone (a closed pipe) is no error of the run's
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{rec}").and_then(|_| out.flush());
    Ok(())
}

fn record(variant: &str, params: &BTreeMap<String, Val>, port: u16, hub: &Hub, reason: &str, t: Duration) -> Value {
    let p = |k: &str| match params.get(k) {
        Some(Val::Int(i)) => json!(i),
        Some(Val::Num(x)) => json!(x),
        Some(Val::Text(s)) => json!(s),
        None => Value::Null,
    };
    let c = &hub.counts;
    json!({
        "benchmark": "im", "role": "server", "language": LANGUAGE, "variant": variant,
        "params": {
            "port": p("port"), "idle_timeout_s": p("idle_timeout_s"), "sendq_lines": p("sendq_lines"),
            "chaos_interval_ms": p("chaos_interval_ms"), "chaos_target": p("chaos_target"),
            "chaos_pick": p("chaos_pick"), "seed": p("seed"),
        },
        "metrics": {
            "elapsed_s": t.as_secs_f64(),
            "port": port,
            "connections_accepted": c.accepted,
            "clients_registered_max": c.registered_max,
            "messages_routed": c.routed,
            "channel_deliveries": c.channel_deliveries,
            // no chat-session or channel processes: nothing to start, kill or restart
            "sessions_started": null,
            "sessions_killed": null,
            "sessions_restarted": null,
            "channels_killed": null,
            "channels_restarted": null,
            // connections it has, and chaos is off: none killed, nothing dropped
            "connections_killed": 0,
            "chaos_dropped_messages": 0,
            "live_bytes": c.live_bytes,
            "sendq_disconnects": c.sendq_disconnects,
            "bad_lines": c.bad_lines,
            "connection_errors": c.connection_errors,
            "stop_reason": reason,
        },
        "validation": {"ok": true, "reason": null},
        "runtime": crate::record::runtime(),
    })
}
