//! The lifecycle every socket server shares (docs/sockets.md "The lifecycle"), so that
//! echo_flood and im differ only in their per-connection task, counters and record: bind
//! 127.0.0.1 only, print the listening line, stop on stdin EOF or the line "stop",
//! SIGTERM/SIGINT, or idle_timeout_s with no open connection; then tell every connection
//! to close and wait, bounded, for their tasks.

use crate::cli::{Config, LANGUAGE};
use serde_json::json;
use std::future::Future;
use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{mpsc, watch};

const STOP_GRACE: Duration = Duration::from_secs(5);
const IDLE_CHECK: Duration = Duration::from_millis(100);

/// What a stopped server reports for its record.
pub struct Lifecycle {
    pub port: u16,
    pub accepted: i64,
    pub stop_reason: &'static str,
    pub elapsed: Duration,
}

/// The listen backlog: the kernel's somaxconn, as Go's net package uses (a flood opens
/// thousands of connections at once; a short queue resets them).
fn backlog() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1024)
}

/// Runs the server of `benchmark` until told to stop, a task per connection running
/// `handle(stream, closing)`; `closing` turns true when the connections must close. Err is
/// the one error line (exit 1).
pub async fn serve<F, Fut>(benchmark: &str, cfg: &Config, handle: F) -> Result<Lifecycle, String>
where
    F: Fn(TcpStream, watch::Receiver<bool>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
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
        let line = json!({"event": "listening", "benchmark": benchmark, "role": "server",
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

    let open = Arc::new(AtomicI64::new(0));
    // when the last connection closed (ms since start; the start counts)
    let last_idle_ms = Arc::new(AtomicI64::new(0));
    let mut accepted = 0i64;
    let (closing_tx, closing_rx) = watch::channel(false);
    let mut tick = tokio::time::interval(IDLE_CHECK);
    let mut tasks = tokio::task::JoinSet::new();
    let reason = loop {
        tokio::select! {
            r = stop_rx.recv() => break r.unwrap_or("stdin_eof"),
            acc = listener.accept() => match acc {
                Ok((stream, _)) => {
                    accepted += 1;
                    open.fetch_add(1, Ordering::AcqRel);
                    let conn = handle(stream, closing_rx.clone());
                    let (open, last_idle_ms) = (open.clone(), last_idle_ms.clone());
                    tasks.spawn(async move {
                        conn.await;
                        last_idle_ms.store(start.elapsed().as_millis() as i64, Ordering::Release);
                        open.fetch_sub(1, Ordering::AcqRel);
                    });
                }
                // e.g. out of file descriptors: not a connection's fault; wait, then go on
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            _ = tick.tick() => {
                let since = start.elapsed().as_millis() as i64 - last_idle_ms.load(Ordering::Acquire);
                if open.load(Ordering::Acquire) == 0 && since >= idle.as_millis() as i64 {
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
    Ok(Lifecycle {
        port,
        accepted,
        stop_reason: reason,
        elapsed: start.elapsed(),
    })
}
