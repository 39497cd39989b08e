//! What every task holds of a connection: its bounded send queue, which sessions, channels
//! and peers fill without waiting (a full queue disconnects the client: ERROR :SendQ
//! exceeded, counted), and its nick. The connection's own task is conn.rs.

use super::{Server, lock};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::futures::Notified;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{Notify, mpsc};

/// One line on the wire, CRLF included; shared by every receiver of a fan-out.
pub type Line = Arc<[u8]>;

/// A registered client's nick, for the tasks that read it.
pub struct Identity {
    pub nick: String,
}

/// What other tasks hold of a connection.
pub struct Client {
    tx: mpsc::Sender<Line>,
    over: AtomicBool,
    kill: Notify,
    pub(super) ident: Mutex<Option<Arc<Identity>>>,
    /// set under the Sessions lock: the client takes part in no new session
    pub(super) left: AtomicBool,
}

impl Client {
    /// A new connection's handle, and the receiving end of its queue of `sendq_lines`.
    pub(super) fn new(sendq_lines: usize) -> (Arc<Client>, mpsc::Receiver<Line>) {
        let (tx, rx) = mpsc::channel::<Line>(sendq_lines);
        let me = Arc::new(Client {
            tx,
            over: AtomicBool::new(false),
            kill: Notify::new(),
            ident: Mutex::new(None),
            left: AtomicBool::new(false),
        });
        (me, rx)
    }

    /// Completes once the queue has overflowed: the connection's task then disconnects it.
    pub(super) fn overflowed(&self) -> Notified<'_> {
        self.kill.notified()
    }

    /// Queues line without waiting; a full queue disconnects the client (counted once).
    pub fn send(&self, srv: &Server, line: Line) {
        if self.over.load(Ordering::Acquire) {
            return;
        }
        if let Err(TrySendError::Full(_)) = self.tx.try_send(line)
            && !self.over.swap(true, Ordering::AcqRel)
        {
            srv.m.sendq_disconnects.fetch_add(1, Ordering::Relaxed);
            self.kill.notify_one();
        }
    }

    pub(super) fn identity(&self) -> Option<Arc<Identity>> {
        lock(&self.ident).clone()
    }

    /// The nick, "*" before registration.
    pub fn nick(&self) -> String {
        self.identity().map_or_else(|| "*".into(), |i| i.nick.clone())
    }
}
