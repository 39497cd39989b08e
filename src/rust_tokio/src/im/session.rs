//! Chat sessions, one per conversation as in RD-IM: a one-to-one PRIVMSG goes from the
//! sender's connection task to the session task of the unordered nick pair, which forwards
//! it to the receiver. Session tasks run under one supervising task, which restarts those
//! the chaos monkey kills (abort: what the killed task's mailbox held is lost).

use super::client::{Client, Line};
use super::{Server, lock};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, Id, JoinSet};

/// Bounds a session's mailbox; a sender waits while it is full.
const SESSION_MAILBOX: usize = 256;

/// The unordered pair of folded nicks: lo <= hi.
pub type PairKey = (String, String);

fn pair_of(a: &str, b: &str) -> PairKey {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// One PRIVMSG on its way through a session.
pub struct Routed {
    to: Arc<Client>,
    line: Line,
}

pub struct Session {
    key: PairKey,
    peers: [Arc<Client>; 2],
    /// the running incarnation's mailbox; None once the session ended
    tx: Mutex<Option<mpsc::Sender<Routed>>>,
    /// set under the Sessions lock
    ended: std::sync::atomic::AtomicBool,
}

/// The registry: sessions by nick pair, and each client's sessions by the client's address
/// (an entry lives only while one of its sessions holds the client, so the address is not
/// reused meanwhile).
#[derive(Default)]
pub struct Sessions {
    by_key: HashMap<PairKey, Arc<Session>>,
    by_client: HashMap<usize, Vec<Arc<Session>>>,
}

fn client_id(c: &Arc<Client>) -> usize {
    Arc::as_ptr(c) as usize
}

#[cfg(test)]
impl Sessions {
    pub fn by_key_is_empty(&self) -> bool {
        self.by_key.is_empty() && self.by_client.is_empty()
    }
}

/// What the supervisor is asked to start: a session's first incarnation.
pub struct Start(Arc<Session>, mpsc::Receiver<Routed>);

impl Session {
    fn has(&self, c: &Arc<Client>) -> bool {
        self.peers.iter().any(|p| Arc::ptr_eq(p, c))
    }
}

/// Ends s for good (no restart); called with the Sessions lock held.
fn end_locked(reg: &mut Sessions, s: &Arc<Session>) {
    if s.ended.swap(true, Ordering::AcqRel) {
        return;
    }
    if reg.by_key.get(&s.key).is_some_and(|x| Arc::ptr_eq(x, s)) {
        reg.by_key.remove(&s.key);
    }
    for p in &s.peers {
        let id = client_id(p);
        if let Some(mine) = reg.by_client.get_mut(&id) {
            mine.retain(|x| !Arc::ptr_eq(x, s));
            if mine.is_empty() {
                reg.by_client.remove(&id);
            }
        }
    }
    lock(&s.tx).take(); // the task's recv ends once in-flight senders are done
}

impl Server {
    /// Sends line from one client to another through their session, starting it on their
    /// first message; false when either has left (a message lost to a kill is not the
    /// sender's error).
    pub(super) async fn route(
        &self,
        from: &Arc<Client>,
        to: &Arc<Client>,
        from_key: &str,
        to_key: &str,
        line: Line,
    ) -> bool {
        let key = pair_of(from_key, to_key);
        let s = {
            let mut reg = lock(&self.sessions);
            match reg.by_key.get(&key) {
                Some(s) if s.has(from) && s.has(to) => s.clone(),
                other => {
                    if let Some(stale) = other.cloned() {
                        end_locked(&mut reg, &stale); // the pair's nicks now belong to others
                    }
                    if from.left.load(Ordering::Acquire) || to.left.load(Ordering::Acquire) {
                        return false;
                    }
                    let (tx, rx) = mpsc::channel(SESSION_MAILBOX);
                    let s = Arc::new(Session {
                        key: key.clone(),
                        peers: [from.clone(), to.clone()],
                        tx: Mutex::new(Some(tx)),
                        ended: Default::default(),
                    });
                    reg.by_key.insert(key, s.clone());
                    reg.by_client.entry(client_id(from)).or_default().push(s.clone());
                    if !Arc::ptr_eq(from, to) {
                        reg.by_client.entry(client_id(to)).or_default().push(s.clone());
                    }
                    self.m.started.fetch_add(1, Ordering::Relaxed);
                    let _ = self.supervisor.send(Start(s.clone(), rx));
                    s
                }
            }
        };
        let tx = lock(&s.tx).clone();
        if let Some(tx) = tx {
            let _ = tx.send(Routed { to: to.clone(), line }).await; // Err: killed, the message is lost
        }
        true
    }

    /// Ends every session of c (it quit, or changed the nick that keys them); with gone, c
    /// takes part in no new session either.
    pub(super) fn leave_sessions(&self, c: &Arc<Client>, gone: bool) {
        let mut reg = lock(&self.sessions);
        if gone {
            c.left.store(true, Ordering::Release);
        }
        let mine: Vec<Arc<Session>> = reg.by_client.get(&client_id(c)).cloned().unwrap_or_default();
        for s in &mine {
            end_locked(&mut reg, s);
        }
    }
}

/// One incarnation: forward each PRIVMSG to its receiver until the mailbox closes.
async fn run(srv: Arc<Server>, mut rx: mpsc::Receiver<Routed>) {
    while let Some(r) = rx.recv().await {
        r.to.send(&srv, r.line);
        srv.m.routed.fetch_add(1, Ordering::Relaxed);
    }
}

/// SplitMix64: the chaos monkey's seeded choices.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The supervisor: starts session tasks, restarts the killed ones unless their session
/// ended meanwhile, and with chaos on kills a random live one every interval.
pub async fn supervise(
    srv: Arc<Server>,
    mut starts: mpsc::UnboundedReceiver<Start>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    let mut by_id: HashMap<Id, (Arc<Session>, usize)> = HashMap::new(); // index in live
    let mut live: Vec<(AbortHandle, bool)> = Vec::new(); // bool: killed, not yet restarted
    let mut rng = SplitMix(srv.settings.seed);
    let period = srv
        .settings
        .chaos_interval
        .unwrap_or(std::time::Duration::from_secs(3600));
    let mut chaos = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let spawn = |tasks: &mut JoinSet<()>,
                 by_id: &mut HashMap<Id, (Arc<Session>, usize)>,
                 live: &mut Vec<(AbortHandle, bool)>,
                 s: Arc<Session>,
                 rx| {
        let h = tasks.spawn(run(srv.clone(), rx));
        by_id.insert(h.id(), (s, live.len()));
        live.push((h, false));
    };
    loop {
        tokio::select! {
            Some(Start(s, rx)) = starts.recv() => spawn(&mut tasks, &mut by_id, &mut live, s, rx),
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                let id = match &done { Ok((id, ())) => *id, Err(e) => e.id() };
                let Some((s, i)) = by_id.remove(&id) else { continue };
                live.swap_remove(i);
                if let Some((h, _)) = live.get(i) {
                    by_id.get_mut(&h.id()).expect("live tasks are indexed").1 = i;
                }
                if matches!(&done, Err(e) if e.is_cancelled()) {
                    let reg = lock(&srv.sessions);
                    if !s.ended.load(Ordering::Acquire) {
                        let (tx, rx) = mpsc::channel(SESSION_MAILBOX);
                        *lock(&s.tx) = Some(tx);
                        drop(reg);
                        spawn(&mut tasks, &mut by_id, &mut live, s, rx);
                        srv.m.restarted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            _ = chaos.tick(), if srv.settings.chaos_interval.is_some() => {
                if !live.is_empty() {
                    let i = (rng.next() % live.len() as u64) as usize;
                    if !live[i].1 { // one already killed and not yet restarted is not killed twice
                        live[i].0.abort();
                        live[i].1 = true;
                        srv.m.killed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            _ = stopped.wait_for(|v| *v) => break,
        }
    }
    tasks.shutdown().await;
}
