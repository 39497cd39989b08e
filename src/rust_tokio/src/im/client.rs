//! What every task holds of a connection: its send queue, which sessions, channels and
//! peers fill without waiting (a line counts from its queuing until the write containing it
//! has returned; one over --sendq-lines disconnects the client: ERROR :SendQ exceeded,
//! counted), and what the clean-up needs once the connection's task has ended however it
//! ended (conn.rs): its channels, nick, registration.

use super::channel::Channel;
use super::{Server, lock};
use std::collections::HashMap;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, mpsc};
use tokio::task::AbortHandle;

/// One line on the wire, CRLF included; shared by every receiver of a fan-out.
pub type Line = Arc<[u8]>;

/// A registered client's names, for the tasks that read them.
pub struct Identity {
    pub nick: String,
    pub prefix: String, // nick!user@127.0.0.1
}

/// Registration states (Client::reg).
pub const REG_NONE: u8 = 0;
pub const REG_DONE: u8 = 1;
pub const REG_CLOSED: u8 = 2; // cleaned up: counted out of registered_now once

/// What other tasks hold of a connection.
pub struct Client {
    tx: mpsc::UnboundedSender<Line>,
    /// lines counted against the limit: queued, or in the batch being written
    counted: AtomicUsize,
    /// lines of the batch being written
    inflight: AtomicUsize,
    limit: usize,
    over: AtomicBool,
    kill: Notify,
    /// held by chaos ("queued" pick) from the draw to the kill: the writer takes no line
    held: AtomicBool,
    pub(super) held_change: Notify,
    pub(super) ident: Mutex<Option<Arc<Identity>>>,
    pub(super) reg: AtomicU8,
    /// set under the Sessions lock: the client takes part in no new session
    pub(super) left: AtomicBool,
    /// the clean-up has begun: the client joins no channel from now on
    pub(super) dead: AtomicBool,
    /// its channels: the task adds and removes them, the clean-up takes them all
    pub(super) channels: Mutex<HashMap<String, Arc<Channel>>>,
    /// (folded nick, freed for good), guarded by the nick registry's lock
    pub(super) nick: Mutex<(String, bool)>,
    /// the socket, for a peek at its end of file; None once the task closes it
    pub(super) fd: Mutex<Option<RawFd>>,
    pub(super) task: Mutex<Option<AbortHandle>>,
    /// index in the connection registry, usize::MAX when out (under its lock)
    pub(super) live: AtomicUsize,
}

impl Client {
    /// A new connection's handle, and the receiving end of its send queue.
    pub(super) fn new(sendq_lines: usize) -> (Arc<Client>, mpsc::UnboundedReceiver<Line>) {
        let (tx, rx) = mpsc::unbounded_channel::<Line>();
        let me = Arc::new(Client {
            tx,
            counted: AtomicUsize::new(0),
            inflight: AtomicUsize::new(0),
            limit: sendq_lines,
            over: AtomicBool::new(false),
            kill: Notify::new(),
            held: AtomicBool::new(false),
            held_change: Notify::new(),
            ident: Mutex::new(None),
            reg: AtomicU8::new(REG_NONE),
            left: AtomicBool::new(false),
            dead: AtomicBool::new(false),
            channels: Mutex::new(HashMap::new()),
            nick: Mutex::new((String::new(), false)),
            fd: Mutex::new(None),
            task: Mutex::new(None),
            live: AtomicUsize::new(usize::MAX),
        });
        (me, rx)
    }

    /// Completes once the queue has overflowed: the connection's task then disconnects it.
    pub(super) fn overflowed(&self) -> Notified<'_> {
        self.kill.notified()
    }

    /// Queues line without waiting; one line over the limit disconnects the client
    /// (counted once).
    pub fn send(&self, srv: &Server, line: Line) {
        if self.over.load(Ordering::Acquire) {
            return;
        }
        if self.counted.fetch_add(1, Ordering::AcqRel) >= self.limit {
            self.counted.fetch_sub(1, Ordering::AcqRel);
            if !self.over.swap(true, Ordering::AcqRel) {
                srv.m.sendq_disconnects.fetch_add(1, Ordering::Relaxed);
                self.kill.notify_one();
            }
            return;
        }
        if self.tx.send(line).is_err() {
            self.counted.fetch_sub(1, Ordering::AcqRel); // the connection has ended
        }
    }

    /// The writer took n lines into its batch (they stay counted).
    pub(super) fn writing(&self, n: usize) {
        self.inflight.store(n, Ordering::Release);
    }

    /// The write containing the batch's n lines has returned.
    pub(super) fn written(&self, n: usize) {
        self.inflight.store(0, Ordering::Release);
        self.counted.fetch_sub(n, Ordering::AcqRel);
    }

    /// Holds the writer (chaos's "queued" pick, from the draw to the kill) or lets it go on.
    pub fn set_held(&self, held: bool) {
        self.held.store(held, Ordering::Release);
        self.held_change.notify_waiters();
    }

    pub(super) fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// Lines counted against the limit (chaos's "queued" pick).
    pub fn queued(&self) -> usize {
        self.counted.load(Ordering::Acquire)
    }

    /// Lines queued and not in the writer's hands (what a kill discards).
    pub(super) fn waiting(&self) -> usize {
        self.queued().saturating_sub(self.inflight.load(Ordering::Acquire))
    }

    pub fn identity(&self) -> Option<Arc<Identity>> {
        lock(&self.ident).clone()
    }

    /// The nick, "*" before registration.
    pub fn nick(&self) -> String {
        self.identity().map_or_else(|| "*".into(), |i| i.nick.clone())
    }

    /// Whether the clean-up has begun or the peer has closed its socket: a non-blocking
    /// MSG_PEEK reads end of file or an error. A peek, not a read: the data stays for the
    /// connection's task.
    pub(super) fn peer_closed(&self) -> bool {
        if self.dead.load(Ordering::Acquire) {
            return true;
        }
        let fd = lock(&self.fd);
        let Some(fd) = *fd else { return true };
        // SAFETY: the descriptor is open while `fd` holds it: the connection's task clears it
        // under this lock before its socket is closed (conn::Io's Drop); ManuallyDrop keeps
        // this borrowed stream from closing it. tokio made it non-blocking.
        let s = std::mem::ManuallyDrop::new(unsafe { std::net::TcpStream::from_raw_fd(fd) });
        match s.peek(&mut [0u8; 1]) {
            Ok(n) => n == 0,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ),
        }
    }
}
