//! Channels: a task per channel holds its members and does the fan-out. A channel ends
//! when it has no member and nothing in its mailbox.

use super::client::{Client, Line};
use super::{Server, lock};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use tokio::sync::{mpsc, oneshot};

/// Bounds a channel's mailbox; a sender waits while it is full.
const CHANNEL_MAILBOX: usize = 256;

pub enum Op {
    /// add c, echo its JOIN to every member, list the names to c
    Join(Arc<Client>, Line),
    /// echo c's PART to every member, then remove c
    Part(Arc<Client>, Line),
    /// deliver a PRIVMSG to every member but c
    Msg(Arc<Client>, Line),
    /// the other members; with true, c also leaves
    Peers(Arc<Client>, bool),
}

/// What a connection holds of a channel: its name and mailbox.
pub struct Channel {
    pub name: String,
    key: String,
    tx: mpsc::Sender<(Op, oneshot::Sender<Vec<Arc<Client>>>)>,
    /// operations posted and not yet handled: the channel ends only at 0
    pending: AtomicI64,
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
            let (tx, rx) = mpsc::channel(CHANNEL_MAILBOX);
            let ch = Arc::new(Channel {
                name: name.to_string(),
                key: key.to_string(),
                tx,
                pending: AtomicI64::new(0),
            });
            reg.insert(key.to_string(), ch.clone());
            tokio::spawn(run(self.clone(), ch.clone(), rx));
            ch
        });
        ch.pending.fetch_add(1, Ordering::AcqRel); // under the lock: the JOIN to come keeps it alive
        Some(ch)
    }
}

impl Channel {
    /// Posts op and waits for the channel's reply (a JOIN's or PART's echo and names then
    /// reach the client before the replies to its next lines). A JOIN was counted by
    /// channel_for; the other operations come from members, which keep the channel alive.
    pub async fn call(&self, op: Op) -> Vec<Arc<Client>> {
        if !matches!(op, Op::Join(..)) {
            self.pending.fetch_add(1, Ordering::AcqRel);
        }
        let (tx, rx) = oneshot::channel();
        if self.tx.send((op, tx)).await.is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }
}

async fn run(srv: Arc<Server>, ch: Arc<Channel>, mut rx: mpsc::Receiver<(Op, oneshot::Sender<Vec<Arc<Client>>>)>) {
    let mut members: Vec<Arc<Client>> = Vec::new();
    let mut stopped = srv.stopped.clone();
    loop {
        let (op, reply) = tokio::select! {
            r = rx.recv() => match r { Some(r) => r, None => return },
            _ = stopped.wait_for(|v| *v) => return,
        };
        // a fault in one operation is contained: the channel keeps its members (the
        // supervision a channel gets: its state survives)
        let out = catch_unwind(AssertUnwindSafe(|| handle(&srv, &ch, &mut members, op))).unwrap_or_default();
        let _ = reply.send(out);
        if ch.pending.fetch_sub(1, Ordering::AcqRel) == 1 && members.is_empty() {
            let mut reg = lock(&srv.channels);
            if ch.pending.load(Ordering::Acquire) == 0 {
                // no one found it meanwhile
                reg.remove(&ch.key);
                return;
            }
        }
    }
}

fn handle(srv: &Server, ch: &Channel, members: &mut Vec<Arc<Client>>, op: Op) -> Vec<Arc<Client>> {
    let others =
        |members: &Vec<Arc<Client>>, c: &Arc<Client>| members.iter().filter(|m| !Arc::ptr_eq(m, c)).cloned().collect();
    match op {
        Op::Join(c, line) => {
            if !members.iter().any(|m| Arc::ptr_eq(m, &c)) {
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
