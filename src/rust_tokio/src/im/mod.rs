//! The im server role (docs/im.md): the IRC-subset instant-messaging server of the case
//! study on tokio. A task per connection (conn.rs) with a bounded send queue (client.rs),
//! under a monitor that cleans up however it ended; a session task per one-to-one
//! conversation, found through a registry keyed by the unordered nick pair (session.rs); a
//! task per channel doing its fan-out, its membership kept in the registry (channel.rs);
//! one supervising task that restarts sessions and runs the chaos monkey (chaos.rs); a
//! mutex-guarded nick registry (here). Every mailbox is unbounded (mailbox.rs). The
//! lifecycle is every socket server's (sockserver.rs).

mod channel;
mod chaos;
mod client;
mod commands;
mod conn;
mod mailbox;
pub mod proto;
mod session;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_chaos;

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
    /// session | channel | connection | any
    pub chaos_target: String,
    /// random | queued
    pub chaos_pick: String,
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
    pub chans_killed: AtomicI64,
    pub chans_restarted: AtomicI64,
    pub conns_killed: AtomicI64,
    /// messages discarded with chaos's victims (mailboxes, send queues)
    pub dropped: AtomicI64,
    /// the last MEMORY command's measure, -1 before any
    pub live_bytes: AtomicI64,
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
    /// live connections, for chaos's uniform choice (Client::live is the index)
    conns: Mutex<Vec<Arc<Client>>>,
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
            m: Counters {
                live_bytes: AtomicI64::new(-1),
                ..Counters::default()
            },
            nicks: Mutex::new(HashMap::new()),
            sessions: Mutex::new(session::Sessions::default()),
            channels: Mutex::new(HashMap::new()),
            conns: Mutex::new(Vec::new()),
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

    /// Gives the nick `key` to c, releasing c's previous one; false when another live
    /// client holds it, or c's own nick was freed for good (killed, closing). A holder whose
    /// peer has already closed its socket gives the nick up at once: a client that drops its
    /// connection and reconnects at once with the same nick must not get 433 because the old
    /// connection's clean-up has not run yet.
    fn claim_nick(&self, key: &str, c: &Arc<Client>) -> bool {
        let mut nicks = lock(&self.nicks);
        let mut mine = lock(&c.nick);
        if mine.1 {
            return false;
        }
        if let Some(h) = nicks.get(key).filter(|h| !Arc::ptr_eq(h, c)) {
            if !h.peer_closed() {
                return false;
            }
            lock(&h.nick).1 = true;
        }
        if !mine.0.is_empty() && mine.0 != key && nicks.get(&mine.0).is_some_and(|h| Arc::ptr_eq(h, c)) {
            nicks.remove(&mine.0);
        }
        nicks.insert(key.to_string(), c.clone());
        mine.0 = key.to_string();
        true
    }

    /// Frees c's nick for good (c is closing or was killed).
    fn release_nick(&self, c: &Arc<Client>) {
        let mut nicks = lock(&self.nicks);
        let mut mine = lock(&c.nick);
        if nicks.get(&mine.0).is_some_and(|h| Arc::ptr_eq(h, c)) {
            nicks.remove(&mine.0);
        }
        mine.1 = true;
    }

    fn lookup_nick(&self, key: &str) -> Option<Arc<Client>> {
        lock(&self.nicks).get(key).cloned()
    }

    fn add_conn(&self, c: &Arc<Client>) {
        let mut reg = lock(&self.conns);
        c.live.store(reg.len(), Ordering::Release);
        reg.push(c.clone());
    }

    /// Takes c out of the connection registry; false if it was out already.
    fn remove_conn_locked(reg: &mut Vec<Arc<Client>>, c: &Arc<Client>) -> bool {
        let i = c.live.swap(usize::MAX, Ordering::AcqRel);
        if i == usize::MAX {
            return false;
        }
        reg.swap_remove(i);
        if let Some(moved) = reg.get(i) {
            moved.live.store(i, Ordering::Release);
        }
        true
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
            "channels_killed": l(&m.chans_killed),
            "channels_restarted": l(&m.chans_restarted),
            "connections_killed": l(&m.conns_killed),
            "chaos_dropped_messages": l(&m.dropped),
            "live_bytes": (l(&m.live_bytes) >= 0).then(|| l(&m.live_bytes)),
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
        chaos_target: cfg.str("chaos_target").to_string(),
        chaos_pick: cfg.str("chaos_pick").to_string(),
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
            "sendq_lines": cfg.int("sendq_lines"), "chaos_interval_ms": chaos,
            "chaos_target": cfg.str("chaos_target"), "chaos_pick": cfg.str("chaos_pick"), "seed": cfg.int("seed"),
        },
        "metrics": metrics,
        "validation": {"ok": true, "reason": null},
        "runtime": crate::record::runtime(),
    }))
}
