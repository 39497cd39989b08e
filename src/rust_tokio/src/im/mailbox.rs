//! A process's mailbox: an unbounded mpsc channel (docs/im.md: one mailbox policy,
//! unbounded, as Erlang's; no push-back except the connection's send queue) with a count
//! of what it holds, for chaos's "queued" pick, which also holds its victim from the draw to
//! the kill (its receiver takes nothing meanwhile, so what is sent waits for the kill). A
//! kill aborts the owning task; the receiver is dropped with the task, and what it still
//! held is discarded and counted then.

use super::Server;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::{Notify, mpsc};

struct Shared {
    queued: AtomicUsize,
    killed: AtomicBool,
    held: AtomicBool,
    /// told when `held` changes
    held_change: Notify,
}

/// The sending end, held by the registry (and cloned for a moment by a sender).
pub struct Tx<T> {
    tx: mpsc::UnboundedSender<T>,
    sh: Arc<Shared>,
}

impl<T> Clone for Tx<T> {
    fn clone(&self) -> Self {
        Tx {
            tx: self.tx.clone(),
            sh: self.sh.clone(),
        }
    }
}

/// The receiving end, owned by the process's task: dropped with it.
pub struct Rx<T> {
    rx: mpsc::UnboundedReceiver<T>,
    sh: Arc<Shared>,
    srv: Arc<Server>,
    /// what to do with each message discarded by a kill (answer a caller, undo a count)
    discard: fn(&Server, T),
}

pub fn new<T>(srv: Arc<Server>, discard: fn(&Server, T)) -> (Tx<T>, Rx<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sh = Arc::new(Shared {
        queued: AtomicUsize::new(0),
        killed: AtomicBool::new(false),
        held: AtomicBool::new(false),
        held_change: Notify::new(),
    });
    (Tx { tx, sh: sh.clone() }, Rx { rx, sh, srv, discard })
}

impl<T> Tx<T> {
    /// Queues v; Err(v) when the receiving task has gone (killed or ended).
    pub fn send(&self, v: T) -> Result<(), T> {
        self.sh.queued.fetch_add(1, Ordering::AcqRel);
        self.tx.send(v).map_err(|e| {
            self.sh.queued.fetch_sub(1, Ordering::AcqRel);
            e.0
        })
    }

    pub fn len(&self) -> usize {
        self.sh.queued.load(Ordering::Acquire)
    }

    pub fn same(&self, o: &Tx<T>) -> bool {
        self.tx.same_channel(&o.tx)
    }

    /// Marks the mailbox killed: what its receiver holds when dropped is counted in
    /// chaos_dropped_messages (at a normal end or a stop it is not).
    pub fn mark_killed(&self) {
        self.sh.killed.store(true, Ordering::Release);
    }

    /// Holds the receiver (chaos's "queued" pick, from the draw to the kill) or lets it go on.
    pub fn set_held(&self, held: bool) {
        self.sh.held.store(held, Ordering::Release);
        self.sh.held_change.notify_waiters();
    }
}

impl<T> Rx<T> {
    /// The next message; none is taken while the mailbox is held.
    pub async fn recv(&mut self) -> Option<T> {
        loop {
            // the common case first: a message waiting and no hold, no waiter registered
            if !self.sh.held.load(Ordering::Acquire)
                && let Ok(v) = self.rx.try_recv()
            {
                self.sh.queued.fetch_sub(1, Ordering::AcqRel);
                return Some(v);
            }
            let change = self.sh.held_change.notified();
            tokio::pin!(change);
            change.as_mut().enable(); // registered before the flag is read: no change is missed
            if self.sh.held.load(Ordering::Acquire) {
                change.await;
                continue;
            }
            tokio::select! {
                biased;
                () = &mut change => continue,
                v = self.rx.recv() => {
                    if v.is_some() {
                        self.sh.queued.fetch_sub(1, Ordering::AcqRel);
                    }
                    return v;
                }
            }
        }
    }
}

impl<T> Drop for Rx<T> {
    fn drop(&mut self) {
        if !self.sh.killed.load(Ordering::Acquire) {
            return;
        }
        self.rx.close(); // later sends fail: their senders turn to the successor
        let mut n = 0;
        while let Ok(v) = self.rx.try_recv() {
            n += 1;
            (self.discard)(&self.srv, v);
        }
        self.srv.m.dropped.fetch_add(n, Ordering::Relaxed);
    }
}
