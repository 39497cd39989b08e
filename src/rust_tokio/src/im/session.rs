//! Chat sessions, one per conversation as in RD-IM: a one-to-one PRIVMSG goes from the
//! sender's connection task to the session task of the unordered nick pair, which forwards
//! it to the receiver. Session tasks run under one supervising task, which restarts those
//! that crash and runs the chaos monkey (chaos.rs); a killed session is replaced at once.

use super::client::{Client, Line};
use super::mailbox::{self, Rx, Tx};
use super::{Server, lock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, Id, JoinSet};

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
    tx: Mutex<Option<Tx<Routed>>>,
    task: Mutex<Option<AbortHandle>>,
    /// set under the Sessions lock
    ended: AtomicBool,
    /// index in Sessions::live (under the Sessions lock)
    live: AtomicUsize,
}

/// The registry: sessions by nick pair, each client's sessions by the client's address
/// (an entry lives only while one of its sessions holds the client, so the address is not
/// reused meanwhile), and the live ones in a Vec for chaos's uniform choice.
#[derive(Default)]
pub struct Sessions {
    by_key: HashMap<PairKey, Arc<Session>>,
    by_client: HashMap<usize, Vec<Arc<Session>>>,
    pub(super) live: Vec<Arc<Session>>,
}

fn client_id(c: &Arc<Client>) -> usize {
    Arc::as_ptr(c) as usize
}

#[cfg(test)]
impl Sessions {
    pub fn by_key_is_empty(&self) -> bool {
        self.by_key.is_empty() && self.by_client.is_empty() && self.live.is_empty()
    }

    pub fn get(&self, a: &str, b: &str) -> Option<Arc<Session>> {
        self.by_key.get(&pair_of(a, b)).cloned()
    }
}

/// What the supervisor is asked to start: a session's first incarnation.
pub struct Start(Arc<Session>, Rx<Routed>);

impl Session {
    fn has(&self, c: &Arc<Client>) -> bool {
        self.peers.iter().any(|p| Arc::ptr_eq(p, c))
    }

    pub(super) fn queued(&self) -> usize {
        lock(&self.tx).as_ref().map_or(0, Tx::len)
    }

    /// The current mailbox's sending end (chaos holds and releases it); None once ended.
    pub(super) fn mailbox(&self) -> Option<Tx<Routed>> {
        lock(&self.tx).clone()
    }

    pub(super) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}

/// Ends s for good (no restart); called with the Sessions lock held. Its mailbox is closed,
/// not killed: what the peers already sent is still delivered.
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
    let i = s.live.load(Ordering::Acquire);
    reg.live.swap_remove(i);
    if let Some(moved) = reg.live.get(i) {
        moved.live.store(i, Ordering::Release);
    }
    lock(&s.tx).take(); // the task's recv ends once what is queued is delivered
}

impl Server {
    /// Sends line from one client to another through their session, starting it on their
    /// first message; false when either has left (a message lost to a kill is not the
    /// sender's error).
    pub(super) fn route(
        self: &Arc<Self>,
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
                    let (tx, rx) = mailbox::new(self.clone(), |_, _| {});
                    let s = Arc::new(Session {
                        key: key.clone(),
                        peers: [from.clone(), to.clone()],
                        tx: Mutex::new(Some(tx)),
                        task: Mutex::new(None),
                        ended: Default::default(),
                        live: AtomicUsize::new(reg.live.len()),
                    });
                    reg.by_key.insert(key, s.clone());
                    reg.live.push(s.clone());
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
        // to the current incarnation, or its successor when a kill came in between
        let mut r = Routed { to: to.clone(), line };
        while let Some(tx) = lock(&s.tx).clone() {
            match tx.send(r) {
                Ok(()) => break,
                Err(back) if lock(&s.tx).as_ref().is_some_and(|t| !t.same(&tx)) => r = back,
                Err(_) => break,
            }
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
async fn run(srv: Arc<Server>, mut rx: Rx<Routed>) {
    while let Some(r) = rx.recv().await {
        r.to.send(&srv, r.line);
        srv.m.routed.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
impl Supervisor {
    /// Tests: a supervisor of their own, for kills at a chosen moment.
    pub fn new(srv: &Arc<Server>) -> Supervisor {
        Supervisor {
            srv: srv.clone(),
            tasks: JoinSet::new(),
            by_id: HashMap::new(),
        }
    }

    /// Tests: s's incarnation is replaced by one that takes nothing out of its mailbox (a
    /// victim busy elsewhere); returns its receiver's task, to be served later or killed.
    pub fn stall(&mut self, s: &Arc<Session>) -> tokio::sync::oneshot::Sender<()> {
        let (tx, rx) = mailbox::new(self.srv.clone(), |_, _| {});
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let srv = self.srv.clone();
        let h = tokio::spawn(async move {
            let _ = wait.await; // stalled until told to go on
            run(srv, rx).await
        });
        lock(&s.tx).replace(tx);
        lock(&s.task).replace(h.abort_handle());
        go
    }
}

/// The supervisor's tasks: every session incarnation, by task id.
pub struct Supervisor {
    srv: Arc<Server>,
    tasks: JoinSet<()>,
    by_id: HashMap<Id, Arc<Session>>,
}

impl Supervisor {
    fn spawn(&mut self, s: Arc<Session>, rx: Rx<Routed>) {
        let h = self.tasks.spawn(run(self.srv.clone(), rx));
        self.by_id.insert(h.id(), s.clone());
        *lock(&s.task) = Some(h);
    }

    /// A fresh incarnation with an empty mailbox replaces s's (the Sessions lock held);
    /// returns the replaced mailbox and task.
    fn restart(&mut self, s: &Arc<Session>) -> Option<(Tx<Routed>, AbortHandle)> {
        let (tx, rx) = mailbox::new(self.srv.clone(), |_, _| {});
        let old = lock(&s.tx).replace(tx);
        let old_task = lock(&s.task).take();
        self.spawn(s.clone(), rx);
        self.srv.m.restarted.fetch_add(1, Ordering::Relaxed);
        old.zip(old_task)
    }

    /// Chaos's act on a session (the Sessions lock held): its successor is named in the
    /// registry first, so new messages go to it; then the victim is aborted, handling
    /// nothing after the message in hand, and its mailbox is dropped with it (counted).
    pub(super) fn kill(&mut self, s: &Arc<Session>) {
        if s.is_ended() {
            return;
        }
        self.srv.m.killed.fetch_add(1, Ordering::Relaxed); // first: restarted never leads
        if let Some((old_tx, old_task)) = self.restart(s) {
            old_tx.mark_killed();
            old_task.abort();
        }
    }
}

/// The supervisor: starts session tasks, restarts one that panicked unless its session
/// ended, and with chaos on strikes every interval.
pub async fn supervise(
    srv: Arc<Server>,
    mut starts: mpsc::UnboundedReceiver<Start>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut sup = Supervisor {
        srv: srv.clone(),
        tasks: JoinSet::new(),
        by_id: HashMap::new(),
    };
    let mut monkey = super::chaos::Monkey::new(&srv);
    let period = srv
        .settings
        .chaos_interval
        .unwrap_or(std::time::Duration::from_secs(3600));
    let mut chaos = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            Some(Start(s, rx)) = starts.recv() => sup.spawn(s, rx),
            Some(done) = sup.tasks.join_next_with_id(), if !sup.tasks.is_empty() => {
                let id = match &done { Ok((id, ())) => *id, Err(e) => e.id() };
                let Some(s) = sup.by_id.remove(&id) else { continue };
                if matches!(&done, Err(e) if e.is_panic()) {
                    let _reg = lock(&srv.sessions);
                    let current = lock(&s.task).as_ref().is_some_and(|h| h.id() == id);
                    if current && !s.is_ended() {
                        sup.restart(&s);
                    }
                }
            }
            _ = chaos.tick(), if srv.settings.chaos_interval.is_some() => monkey.strike(&mut sup),
            _ = stopped.wait_for(|v| *v) => break,
        }
    }
    sup.tasks.shutdown().await;
}
