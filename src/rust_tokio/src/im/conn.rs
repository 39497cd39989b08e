//! A connection: its task reads lines, handles each command (commands.rs) and writes its
//! own socket from the client's send queue (client.rs), until the client quits, the
//! connection closes, the queue overflows or the server stops. A monitor awaits the task
//! and cleans up however it ended: returned, panicked, or aborted by chaos.

use super::Server;
use super::client::{Client, Line};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, watch};

const READ_BUFFER_BYTES: usize = 4096;
/// Lines are gathered into one write up to this many bytes.
const WRITE_BATCH_BYTES: usize = 65536;
/// How long the last lines (ERROR, a QUIT's reply) may take to leave.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The connection task's own state.
pub(super) struct Conn {
    pub(super) srv: Arc<Server>,
    pub(super) me: Arc<Client>,
    pub(super) nick: String,
    pub(super) key: String, // the folded nick
    pub(super) user: String,
    /// nick!user@127.0.0.1 once registered
    pub(super) prefix: String,
    /// the line being handled was answered with an error numeric
    pub(super) erred: bool,
}

/// The socket's halves. Its Drop forgets the descriptor (under the lock a peek takes)
/// before the halves close it, whether the task ends or is aborted.
struct Io {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    me: Arc<Client>,
}

impl Drop for Io {
    fn drop(&mut self) {
        *super::lock(&self.me.fd) = None;
    }
}

/// The monitor: runs the connection's task until it ends, then takes the client out of
/// every registry (commands.rs, cleanup).
pub async fn connection(srv: Arc<Server>, stream: TcpStream, closing: watch::Receiver<bool>) {
    let (me, rx) = Client::new(srv.settings.sendq_lines);
    let task = tokio::spawn(run(srv.clone(), me.clone(), stream, rx, closing));
    *super::lock(&me.task) = Some(task.abort_handle());
    srv.add_conn(&me); // after the abort handle: chaos may pick it from now on
    let reason = match task.await {
        Ok(reason) => reason,
        Err(e) if e.is_panic() => "Connection crashed".into(),
        Err(_) => "Killed".into(),
    };
    super::commands::cleanup(&srv, &me, &reason).await;
}

async fn run(
    srv: Arc<Server>,
    me: Arc<Client>,
    stream: TcpStream,
    mut rx: mpsc::UnboundedReceiver<Line>,
    mut closing: watch::Receiver<bool>,
) -> String {
    let mut conn = Conn {
        srv: srv.clone(),
        me: me.clone(),
        nick: String::new(),
        key: String::new(),
        user: String::new(),
        prefix: String::new(),
        erred: false,
    };
    let max = srv.settings.protocol.line_max_bytes;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    let (rd, wr) = stream.into_split();
    let mut io = Io { rd, wr, me: me.clone() };
    *super::lock(&me.fd) = Some(fd); // with no await since: Io's Drop will clear it
    let mut rbuf = vec![0u8; READ_BUFFER_BYTES.max(2 * max)];
    let (mut have, mut discarding) = (0usize, false);
    let mut wbuf: Vec<u8> = Vec::new();
    // made once, not at every turn of the loop: registering and dropping a Notified waiter
    // per wake-up was among the task's top costs in the profile (perf)
    let overflow = me.overflowed();
    let stop = stopping(&mut closing);
    // chaos's hold (Client::set_held): remade only when it fires, for the same reason
    let held_change = me.held_change.notified();
    tokio::pin!(overflow, stop, held_change);
    held_change.as_mut().enable();
    'conn: loop {
        let held = me.is_held();
        tokio::select! {
            () = &mut stop => break "Server stopping".into(),
            () = &mut held_change => {
                held_change.set(me.held_change.notified());
                held_change.as_mut().enable();
            }
            _ = &mut overflow => break sendq_exceeded(&mut io.wr, false).await,
            r = io.rd.read(&mut rbuf[have..]) => {
                match r {
                    Ok(0) => break "Connection closed".into(),
                    Ok(n) => have += n,
                    Err(_) => {
                        srv.m.conn_errors.fetch_add(1, Ordering::Relaxed);
                        break "Connection closed".into();
                    }
                }
                // whole lines out of the buffer: None for one too long
                let mut lines: Vec<Option<String>> = Vec::new();
                let mut at = 0;
                while let Some(i) = rbuf[at..have].iter().position(|&b| b == b'\n') {
                    let raw = &rbuf[at..at + i];
                    at += i + 1;
                    let body = raw.strip_suffix(b"\r").unwrap_or(raw);
                    if std::mem::take(&mut discarding) || body.len() + 2 > max {
                        lines.push(None);
                    } else {
                        lines.push(Some(String::from_utf8_lossy(body).into_owned()));
                    }
                }
                rbuf.copy_within(at..have, 0);
                have -= at;
                if have > max { // the line is too long already: drop it up to its end
                    discarding = true;
                    have = 0;
                }
                for line in lines {
                    conn.erred = false;
                    match line {
                        None => conn.numeric(417, &["Input line was too long"]),
                        Some(line) => if let Some(reason) = conn.handle(&line).await {
                            flush(&me, &mut rx, &mut io.wr, &mut wbuf).await;
                            break 'conn reason;
                        }
                    }
                    if conn.erred {
                        srv.m.bad_lines.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Some(first) = rx.recv(), if !held => {
                wbuf.clear();
                wbuf.extend_from_slice(&first);
                let mut n = 1;
                while wbuf.len() < WRITE_BATCH_BYTES {
                    match rx.try_recv() {
                        Ok(l) => { wbuf.extend_from_slice(&l); n += 1 }
                        Err(_) => break,
                    }
                }
                me.writing(n); // the batch's lines stay counted until its write returned
                let mut off = 0;
                while off < wbuf.len() {
                    tokio::select! {
                        r = io.wr.write(&wbuf[off..]) => match r {
                            Ok(k) if k > 0 => off += k,
                            _ => {
                                srv.m.conn_errors.fetch_add(1, Ordering::Relaxed);
                                break 'conn "Connection closed".into();
                            }
                        },
                        // the client stopped reading: the write is given up, maybe mid-line
                        _ = &mut overflow => break 'conn sendq_exceeded(&mut io.wr, off > 0 && wbuf[off - 1] != b'\n').await,
                        () = &mut stop => break 'conn "Server stopping".into(),
                    }
                }
                me.written(n);
            }
        }
    }
}

/// Returns once the server tells its connections to close (without holding the watch's
/// guard, so the branch that follows may wait).
async fn stopping(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|v| *v).await;
}

/// Writes ERROR :SendQ exceeded (after a CRLF when a cut line is on the wire), bounded.
async fn sendq_exceeded(wr: &mut OwnedWriteHalf, mid_line: bool) -> String {
    let msg: &[u8] = if mid_line {
        b"\r\nERROR :SendQ exceeded\r\n"
    } else {
        b"ERROR :SendQ exceeded\r\n"
    };
    let _ = tokio::time::timeout(CLOSE_GRACE, wr.write_all(msg)).await;
    "SendQ exceeded".into()
}

/// Writes what is queued (a QUIT's ERROR), bounded.
async fn flush(me: &Client, rx: &mut mpsc::UnboundedReceiver<Line>, wr: &mut OwnedWriteHalf, wbuf: &mut Vec<u8>) {
    wbuf.clear();
    let mut n = 0;
    while let Ok(l) = rx.try_recv() {
        wbuf.extend_from_slice(&l);
        n += 1;
    }
    me.writing(n);
    let _ = tokio::time::timeout(CLOSE_GRACE, wr.write_all(wbuf)).await;
    me.written(n);
}
