//! echo_flood server (docs/sockets.md): a tokio task per connection, each reading up to
//! 32 KiB and writing it back (the idiomatic tokio echo server, as Go's goroutine per
//! connection). The lifecycle is every socket server's: bind 127.0.0.1 only, print the
//! listening line, stop on stdin EOF or the line "stop", SIGTERM/SIGINT, or idle_timeout_s
//! with no open connection; then close every connection, wait (bounded) for their tasks
//! and print one record.

use crate::cli::{Config, LANGUAGE};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{mpsc, watch};

const ECHO_BUFFER_BYTES: usize = 32768;
const STOP_GRACE: Duration = Duration::from_secs(5);
const IDLE_CHECK: Duration = Duration::from_millis(100);

#[derive(Default)]
struct Counters {
    accepted: AtomicI64,
    open: AtomicI64,
    bytes_read: AtomicI64,
    bytes_written: AtomicI64,
    conn_errors: AtomicI64,
    /// when the last connection closed (ms since start; the start counts)
    last_idle_ms: AtomicI64,
}

/// The listen backlog: the kernel's somaxconn, as Go's net package uses (a flood opens
/// thousands of connections at once; a short queue resets them).
fn backlog() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1024)
}

/// Runs the server until told to stop; Err is the one error line (exit 1).
pub async fn serve(cfg: &Config) -> Result<Value, String> {
    let port = cfg.int("port") as u16;
    let idle = Duration::from_secs_f64(cfg.num("idle_timeout_s"));
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = TcpSocket::new_v4()
        .and_then(|s| {
            s.set_reuseaddr(true)?;
            s.bind(addr)?;
            s.listen(backlog())
        })
        .map_err(|e| format!("cannot listen on 127.0.0.1 port {port}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let start = Instant::now();
    {
        let mut out = std::io::stdout().lock();
        let line = json!({"event": "listening", "benchmark": "echo_flood", "role": "server",
                          "language": LANGUAGE, "address": "127.0.0.1", "port": port});
        let _ = writeln!(out, "{line}").and_then(|_| out.flush());
    }

    let (stop_tx, mut stop_rx) = mpsc::channel::<&'static str>(4);
    let tx = stop_tx.clone();
    // stdin on a plain thread: tokio's stdin would hold a blocking-pool thread anyway
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) if l.trim() == "stop" => {
                    let _ = tx.blocking_send("stop_line");
                    return;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = tx.blocking_send("stdin_eof");
    });
    for kind in [
        tokio::signal::unix::SignalKind::terminate(),
        tokio::signal::unix::SignalKind::interrupt(),
    ] {
        let mut sig = tokio::signal::unix::signal(kind).map_err(|e| e.to_string())?;
        let tx = stop_tx.clone();
        tokio::spawn(async move {
            if sig.recv().await.is_some() {
                let _ = tx.send("signal").await;
            }
        });
    }

    let counters = Arc::new(Counters::default());
    let (closing_tx, closing_rx) = watch::channel(false);
    let mut tick = tokio::time::interval(IDLE_CHECK);
    let mut tasks = tokio::task::JoinSet::new();
    let reason = loop {
        tokio::select! {
            r = stop_rx.recv() => break r.unwrap_or("stdin_eof"),
            acc = listener.accept() => match acc {
                Ok((stream, _)) => {
                    counters.accepted.fetch_add(1, Ordering::Relaxed);
                    counters.open.fetch_add(1, Ordering::AcqRel);
                    tasks.spawn(connection(stream, counters.clone(), closing_rx.clone(), start));
                }
                // e.g. out of file descriptors: not a connection's fault; wait, then go on
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            _ = tick.tick() => {
                let since = start.elapsed().as_millis() as i64 - counters.last_idle_ms.load(Ordering::Acquire);
                if counters.open.load(Ordering::Acquire) == 0 && since >= idle.as_millis() as i64 {
                    break "idle_timeout";
                }
            }
            // finished connection tasks are reaped here, so the set does not grow for ever
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    };
    drop(listener);
    let _ = closing_tx.send(true); // every connection closes its socket
    let _ = tokio::time::timeout(STOP_GRACE, async { while tasks.join_next().await.is_some() {} }).await;
    let c = &counters;
    Ok(json!({
        "benchmark": "echo_flood", "role": "server", "language": LANGUAGE, "variant": cfg.variant,
        "params": {"port": cfg.int("port"), "idle_timeout_s": cfg.num("idle_timeout_s")},
        "metrics": {
            "elapsed_s": start.elapsed().as_secs_f64(),
            "port": port,
            "connections_accepted": c.accepted.load(Ordering::Relaxed),
            "bytes_read": c.bytes_read.load(Ordering::Relaxed),
            "bytes_written": c.bytes_written.load(Ordering::Relaxed),
            "connection_errors": c.conn_errors.load(Ordering::Relaxed),
            "stop_reason": reason,
        },
        "validation": {"ok": true, "reason": null},
        "runtime": crate::record::runtime(),
    }))
}

/// One connection: read up to 32 KiB, write it back, until EOF, an error, or the stop.
/// A clean EOF is not an error, nor is the server's own close when told to stop.
async fn connection(mut s: TcpStream, c: Arc<Counters>, mut closing: watch::Receiver<bool>, start: Instant) {
    let mut buf = vec![0u8; ECHO_BUFFER_BYTES];
    loop {
        let n = tokio::select! {
            r = s.read(&mut buf) => match r {
                Ok(0) => break,
                Ok(n) => n,
                Err(_) => { c.conn_errors.fetch_add(1, Ordering::Relaxed); break; }
            },
            _ = closing.wait_for(|v| *v) => break,
        };
        c.bytes_read.fetch_add(n as i64, Ordering::Relaxed);
        let w = tokio::select! {
            r = s.write_all(&buf[..n]) => r,
            _ = closing.wait_for(|v| *v) => break,
        };
        if w.is_err() {
            c.conn_errors.fetch_add(1, Ordering::Relaxed);
            break;
        }
        c.bytes_written.fetch_add(n as i64, Ordering::Relaxed);
    }
    drop(s);
    c.last_idle_ms
        .store(start.elapsed().as_millis() as i64, Ordering::Release);
    c.open.fetch_sub(1, Ordering::AcqRel);
}
