//! echo_flood server (docs/sockets.md): a tokio task per connection, each reading up to
//! 32 KiB and writing it back (the idiomatic tokio echo server, as Go's goroutine per
//! connection). The lifecycle is every socket server's (sockserver.rs); this file is the
//! connection task, its counters and the record.

use crate::cli::{Config, LANGUAGE};
use crate::sockserver;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

const ECHO_BUFFER_BYTES: usize = 32768;

#[derive(Default)]
struct Counters {
    bytes_read: AtomicI64,
    bytes_written: AtomicI64,
    conn_errors: AtomicI64,
}

/// Runs the server until told to stop; Err is the one error line (exit 1).
pub async fn serve(cfg: &Config) -> Result<Value, String> {
    let counters = Arc::new(Counters::default());
    let c = counters.clone();
    let run = sockserver::serve("echo_flood", cfg, move |stream, closing| {
        connection(stream, c.clone(), closing)
    })
    .await?;
    let c = &counters;
    Ok(json!({
        "benchmark": "echo_flood", "role": "server", "language": LANGUAGE, "variant": cfg.variant,
        "params": {"port": cfg.int("port"), "idle_timeout_s": cfg.num("idle_timeout_s")},
        "metrics": {
            "elapsed_s": run.elapsed.as_secs_f64(),
            "port": run.port,
            "connections_accepted": run.accepted,
            "bytes_read": c.bytes_read.load(Ordering::Relaxed),
            "bytes_written": c.bytes_written.load(Ordering::Relaxed),
            "connection_errors": c.conn_errors.load(Ordering::Relaxed),
            "stop_reason": run.stop_reason,
        },
        "validation": {"ok": true, "reason": null},
        "runtime": crate::record::runtime(),
    }))
}

/// One connection: read up to 32 KiB, write it back, until EOF, an error, or the stop.
/// A clean EOF is not an error, nor is the server's own close when told to stop.
async fn connection(mut s: TcpStream, c: Arc<Counters>, mut closing: watch::Receiver<bool>) {
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
}
