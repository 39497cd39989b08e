//! The im server role (docs/im.md): the IRC-subset instant-messaging server of the case
//! study on tokio. A task per connection (client.rs) with a bounded send queue; a session
//! task per one-to-one conversation, found through a registry keyed by the unordered nick
//! pair, under a supervising task that restarts the ones the chaos monkey kills
//! (session.rs); a task per channel doing its fan-out (channel.rs); a mutex-guarded nick
//! registry (here). The lifecycle is every socket server's (sockserver.rs).

mod channel;
mod client;
mod commands;
mod conn;
pub mod proto;
mod session;
#[cfg(test)]
mod tests;

use crate::cli::{Config, LANGUAGE};
use crate::sockserver;
use client::Client;
use proto::Protocol;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// What the command line sets.
pub struct Settings {
    pub protocol: Protocol,
    pub sendq_lines: usize,
    pub chaos_interval: Option<Duration>,
    pub seed: u64,
}

/// The server's counters (the record's metrics).
#[derive(Default)]
pub struct Counters {
    pub registered_now: AtomicI64,
    pub registered_max: AtomicI64,
    pub routed: AtomicI64,
    pub chan_deliveries: AtomicI64,
    pub started: AtomicI64,
    pub killed: AtomicI64,
    pub restarted: AtomicI64,
    pub sendq_disconnects: AtomicI64,
    pub bad_lines: AtomicI64,
    pub conn_errors: AtomicI64,
}

/// The registries every connection shares.
pub struct Server {
    pub settings: Settings,
    pub m: Counters,
    nicks: Mutex<HashMap<String, Arc<Client>>>,
    sessions: Mutex<session::Sessions>,
    channels: Mutex<HashMap<String, Arc<channel::Channel>>>,
    supervisor: mpsc::UnboundedSender<session::Start>,
    stopped: watch::Receiver<bool>,
}

/// A poisoned lock (a task panicked holding it) still guards consistent data here: every
/// critical section is a few map operations.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    /// The server and its supervisor, which runs until `stopped` turns true.
    pub fn start(settings: Settings, stopped: watch::Receiver<bool>) -> Arc<Server> {
        let (tx, rx) = mpsc::unbounded_channel();
        let srv = Arc::new(Server {
            settings,
            m: Counters::default(),
            nicks: Mutex::new(HashMap::new()),
            sessions: Mutex::new(session::Sessions::default()),
            channels: Mutex::new(HashMap::new()),
            supervisor: tx,
            stopped: stopped.clone(),
        });
        tokio::spawn(session::supervise(srv.clone(), rx, stopped));
        srv
    }

    fn registered_one(&self) {
        let n = self.m.registered_now.fetch_add(1, Ordering::AcqRel) + 1;
        self.m.registered_max.fetch_max(n, Ordering::AcqRel);
    }

    /// Gives the nick `key` to c, releasing `old` (c's previous nick); false when another
    /// client holds it.
    fn claim_nick(&self, key: &str, old: Option<&str>, c: &Arc<Client>) -> bool {
        let mut nicks = lock(&self.nicks);
        if nicks.get(key).is_some_and(|h| !Arc::ptr_eq(h, c)) {
            return false;
        }
        if let Some(old) = old.filter(|o| *o != key) {
            nicks.remove(old);
        }
        nicks.insert(key.to_string(), c.clone());
        true
    }

    fn release_nick(&self, key: &str, c: &Arc<Client>) {
        let mut nicks = lock(&self.nicks);
        if nicks.get(key).is_some_and(|h| Arc::ptr_eq(h, c)) {
            nicks.remove(key);
        }
    }

    fn lookup_nick(&self, key: &str) -> Option<Arc<Client>> {
        lock(&self.nicks).get(key).cloned()
    }

    /// The record's metrics.
    fn metrics(&self) -> Value {
        let l = |a: &AtomicI64| a.load(Ordering::Relaxed);
        let m = &self.m;
        json!({
            "connection_errors": l(&m.conn_errors),
            "clients_registered_max": l(&m.registered_max),
            "messages_routed": l(&m.routed),
            "channel_deliveries": l(&m.chan_deliveries),
            "sessions_started": l(&m.started),
            "sessions_killed": l(&m.killed),
            "sessions_restarted": l(&m.restarted),
            "sendq_disconnects": l(&m.sendq_disconnects),
            "bad_lines": l(&m.bad_lines),
        })
    }
}

/// Runs the server until told to stop and returns its record; Err is the one error line.
pub async fn serve(cfg: &Config, spec: &Value) -> Result<Value, String> {
    let chaos = cfg.int("chaos_interval_ms");
    let settings = Settings {
        protocol: Protocol::from_spec(spec)?,
        sendq_lines: cfg.int("sendq_lines") as usize,
        chaos_interval: (chaos > 0).then(|| Duration::from_millis(chaos as u64)),
        seed: cfg.int("seed") as u64,
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let srv = Server::start(settings, stop_rx);
    let s = srv.clone();
    let run = sockserver::serve("im", cfg, move |stream, closing| {
        // Nagle off, as Go (its default), Erlang ({nodelay, true}) and Akka IO (its default) do:
        // a chat line must not wait for the ACK of the one before it
        let _ = stream.set_nodelay(true);
        conn::connection(s.clone(), stream, closing)
    })
    .await;
    let _ = stop_tx.send(true);
    let run = run?;
    let mut metrics = srv.metrics();
    let o = metrics.as_object_mut().expect("an object");
    o.insert("elapsed_s".into(), json!(run.elapsed.as_secs_f64()));
    o.insert("port".into(), json!(run.port));
    o.insert("stop_reason".into(), json!(run.stop_reason));
    o.insert("connections_accepted".into(), json!(run.accepted));
    Ok(json!({
        "benchmark": "im", "role": "server", "language": LANGUAGE, "variant": cfg.variant,
        "params": {
            "port": cfg.int("port"), "idle_timeout_s": cfg.num("idle_timeout_s"),
            "sendq_lines": cfg.int("sendq_lines"), "chaos_interval_ms": chaos, "seed": cfg.int("seed"),
        },
        "metrics": metrics,
        "validation": {"ok": true, "reason": null},
        "runtime": crate::record::runtime(),
    }))
}
