//! Channels: a task per channel does the fan-out. Its membership is kept in the registry's
//! record, outside the task, so a channel that chaos kills is restarted with its members,
//! who are still connected. A channel ends when it has no member and no call pending.

use super::client::{Client, Line};
use super::mailbox::{self, Rx, Tx};
use super::{Server, lock};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

#[derive(Clone)]
pub enum Op {
    /// add c, echo its JOIN to every member, list the names to c
    Join(Arc<Client>, Line),
    /// echo c's PART to every member, then remove c
    Part(Arc<Client>, Line),
    /// deliver a PRIVMSG to every member but c (a cast: nothing waits for it)
    Msg(Arc<Client>, Line),
    /// the other members; with true, c also leaves
    Peers(Arc<Client>, bool),
}

/// An operation in a channel's mailbox; reply is None for a cast.
pub struct Env {
    op: Op,
    reply: Option<oneshot::Sender<Vec<Arc<Client>>>>,
}

/// A channel's registry record.
pub struct Channel {
    pub name: String,
    key: String,
    /// the current incarnation's mailbox; None once the channel ended
    tx: Mutex<Option<Tx<Env>>>,
    task: Mutex<Option<AbortHandle>>,
    /// calls posted and not yet answered: the channel ends only at 0 (a cast comes from a
    /// member, whose leaving is a call posted after it)
    pending: AtomicI64,
    members: Mutex<Vec<Arc<Client>>>,
}

impl Server {
    /// The channel, None if none; with create (for a JOIN, which must then be posted) a
    /// missing one is created, `name` being its shown name.
    pub(super) fn channel_for(self: &Arc<Self>, key: &str, name: &str, create: bool) -> Option<Arc<Channel>> {
        let mut reg = lock(&self.channels);
        let found = reg.get(key).cloned();
        if !create {
            return found;
        }
        let ch = found.unwrap_or_else(|| {
            let ch = Arc::new(Channel {
                name: name.to_string(),
                key: key.to_string(),
                tx: Mutex::new(None),
                task: Mutex::new(None),
                pending: AtomicI64::new(0),
                members: Mutex::new(Vec::new()),
            });
            reg.insert(key.to_string(), ch.clone());
            self.start_channel(&ch);
            ch
        });
        ch.pending.fetch_add(1, Ordering::AcqRel); // under the lock: the JOIN to come keeps it alive
        Some(ch)
    }

    /// Starts an incarnation with a fresh mailbox; returns the one it replaces.
    fn start_channel(self: &Arc<Self>, ch: &Arc<Channel>) -> Option<(Tx<Env>, AbortHandle)> {
        let (tx, rx) = mailbox::new(self.clone(), |_, _| {}); // a dropped call's caller retries
        let old_tx = lock(&ch.tx).replace(tx);
        let h = tokio::spawn(run(self.clone(), ch.clone(), rx)).abort_handle();
        let old_task = lock(&ch.task).replace(h);
        old_tx.zip(old_task)
    }

    /// Chaos's act on a channel (the channels lock held): a fresh incarnation is named
    /// first, then the victim is aborted; its mailbox goes with it (PRIVMSGs in it are lost
    /// and counted, a call in it is posted again by its caller, as a gen_server's caller
    /// would on the callee's death).
    pub(super) fn kill_channel(self: &Arc<Self>, ch: &Arc<Channel>) {
        if lock(&ch.tx).is_none() {
            return; // ended
        }
        if let Some((old_tx, old_task)) = self.start_channel(ch) {
            old_tx.mark_killed();
            old_task.abort();
        }
        self.m.chans_killed.fetch_add(1, Ordering::Relaxed);
        self.m.chans_restarted.fetch_add(1, Ordering::Relaxed);
    }

    /// Ends ch when it has no member and nothing pending.
    fn end_if_idle(&self, ch: &Arc<Channel>) {
        let mut reg = lock(&self.channels);
        if ch.pending.load(Ordering::Acquire) == 0
            && lock(&ch.members).is_empty()
            && reg.get(&ch.key).is_some_and(|x| Arc::ptr_eq(x, ch))
        {
            reg.remove(&ch.key);
            lock(&ch.tx).take(); // the task's recv ends
        }
    }
}

#[cfg(test)]
impl Server {
    /// Tests: the channel's incarnation is replaced by one that takes nothing out of its
    /// mailbox (a victim busy elsewhere), so a kill finds what was posted since.
    pub(super) fn stall_channel(self: &Arc<Self>, ch: &Arc<Channel>) {
        let (tx, rx) = mailbox::new(self.clone(), |_, _| {});
        let h = tokio::spawn(async move {
            let _rx = rx;
            std::future::pending::<()>().await
        });
        lock(&ch.tx).replace(tx);
        if let Some(old) = lock(&ch.task).replace(h.abort_handle()) {
            old.abort();
        }
    }
}

impl Channel {
    /// The current mailbox's length (chaos's "queued" pick).
    pub(super) fn queued(&self) -> usize {
        lock(&self.tx).as_ref().map_or(0, Tx::len)
    }

    /// The current mailbox's sending end (chaos holds and releases it); None once ended.
    pub(super) fn mailbox(&self) -> Option<Tx<Env>> {
        lock(&self.tx).clone()
    }

    /// Posts env to the current incarnation, to its successor if a kill came first; Err
    /// once the channel has ended.
    fn post(&self, mut env: Env) -> Result<(), ()> {
        loop {
            let Some(tx) = lock(&self.tx).clone() else {
                return Err(());
            };
            match tx.send(env) {
                Ok(()) => return Ok(()),
                Err(back) if lock(&self.tx).as_ref().is_some_and(|t| !t.same(&tx)) => env = back,
                Err(_) => return Err(()),
            }
        }
    }

    /// Posts a PRIVMSG without waiting: a kill may lose it.
    pub fn cast(&self, op: Op) {
        let _ = self.post(Env { op, reply: None });
    }

    /// Posts op and waits for the channel's reply (a JOIN's or PART's echo and names then
    /// reach the client before the replies to its next lines); a call lost to a kill is
    /// posted again to the successor. A JOIN was counted by channel_for; the others come
    /// from members, which keep the channel alive.
    pub async fn call(&self, op: Op) -> Vec<Arc<Client>> {
        if !matches!(op, Op::Join(..)) {
            self.pending.fetch_add(1, Ordering::AcqRel);
        }
        loop {
            let (tx, rx) = oneshot::channel();
            if self
                .post(Env {
                    op: op.clone(),
                    reply: Some(tx),
                })
                .is_err()
            {
                return Vec::new();
            }
            if let Ok(v) = rx.await {
                return v;
            }
            if lock(&self.tx).is_none() {
                return Vec::new(); // ended or the server stopped
            }
        }
    }
}

async fn run(srv: Arc<Server>, ch: Arc<Channel>, mut rx: Rx<Env>) {
    let mut stopped = srv.stopped.clone();
    loop {
        let env = tokio::select! {
            r = rx.recv() => match r { Some(r) => r, None => return },
            _ = stopped.wait_for(|v| *v) => { lock(&ch.tx).take(); return }
        };
        // a fault in one operation is contained: the channel keeps its members (the
        // supervision a channel gets: its state survives)
        let out =
            catch_unwind(AssertUnwindSafe(|| handle(&srv, &ch, &mut lock(&ch.members), env.op))).unwrap_or_default();
        if let Some(reply) = env.reply {
            let _ = reply.send(out);
            if ch.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                srv.end_if_idle(&ch);
            }
        }
    }
}

fn handle(srv: &Server, ch: &Channel, members: &mut Vec<Arc<Client>>, op: Op) -> Vec<Arc<Client>> {
    let others =
        |members: &Vec<Arc<Client>>, c: &Arc<Client>| members.iter().filter(|m| !Arc::ptr_eq(m, c)).cloned().collect();
    match op {
        Op::Join(c, line) => {
            // a client being cleaned up joins nothing: its clean-up may have left this
            // channel before the JOIN it posted arrived
            if !members.iter().any(|m| Arc::ptr_eq(m, &c)) && !c.dead.load(Ordering::Acquire) {
                members.push(c.clone());
                for m in members.iter() {
                    m.send(srv, line.clone());
                }
                names(srv, ch, members, &c);
            }
        }
        Op::Part(c, line) => {
            if let Some(i) = members.iter().position(|m| Arc::ptr_eq(m, &c)) {
                for m in members.iter() {
                    m.send(srv, line.clone());
                }
                members.remove(i);
            }
        }
        Op::Msg(c, line) => {
            let mut n = 0;
            for m in members.iter().filter(|m| !Arc::ptr_eq(m, &c)) {
                m.send(srv, line.clone());
                n += 1;
            }
            srv.m.chan_deliveries.fetch_add(n, Ordering::Relaxed);
        }
        Op::Peers(c, leaving) => {
            if leaving {
                members.retain(|m| !Arc::ptr_eq(m, &c));
            }
            return others(members, &c);
        }
    }
    Vec::new()
}

/// The member list (353, split to fit a line) and 366, to c.
fn names(srv: &Server, ch: &Channel, members: &[Arc<Client>], c: &Arc<Client>) {
    let p = &srv.settings.protocol;
    let nick = c.nick();
    // ":server 353 nick = #chan :" and CRLF
    let head = p.server_name.len() + nick.len() + ch.name.len() + 16;
    let mut list = String::new();
    for m in members {
        let n = m.nick();
        if !list.is_empty() && head + list.len() + 1 + n.len() > p.line_max_bytes {
            c.send(srv, p.numeric(353, &nick, &["=", &ch.name, &list]).into());
            list.clear();
        }
        if !list.is_empty() {
            list.push(' ');
        }
        list.push_str(&n);
    }
    if !list.is_empty() {
        c.send(srv, p.numeric(353, &nick, &["=", &ch.name, &list]).into());
    }
    c.send(srv, p.numeric(366, &nick, &[&ch.name, "End of NAMES list"]).into());
}
