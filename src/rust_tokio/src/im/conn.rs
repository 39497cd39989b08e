//! A connection's task: it reads lines, handles each command (commands.rs) and writes its
//! own socket from the client's bounded send queue (client.rs), until the client quits, the
//! connection closes, the queue overflows or the server stops.

use super::Server;
use super::channel::Channel;
use super::client::{Client, Line};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
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
    pub(super) registered: bool,
    pub(super) channels: HashMap<String, Arc<Channel>>,
    /// the line being handled was answered with an error numeric
    pub(super) erred: bool,
}

/// Runs one connection until it ends, then takes it out of every registry.
pub async fn connection(srv: Arc<Server>, stream: TcpStream, mut closing: watch::Receiver<bool>) {
    let (me, mut rx) = Client::new(srv.settings.sendq_lines);
    let mut conn = Conn {
        srv: srv.clone(),
        me: me.clone(),
        nick: String::new(),
        key: String::new(),
        user: String::new(),
        registered: false,
        channels: HashMap::new(),
        erred: false,
    };
    let max = srv.settings.protocol.line_max_bytes;
    let (mut rd, mut wr) = stream.into_split();
    let mut rbuf = vec![0u8; READ_BUFFER_BYTES.max(2 * max)];
    let (mut have, mut discarding) = (0usize, false);
    let mut wbuf: Vec<u8> = Vec::new();
    let mut closing_mid_write = closing.clone();
    let reason: String = 'conn: loop {
        tokio::select! {
            () = stopping(&mut closing) => break "Server stopping".into(),
            _ = me.overflowed() => break sendq_exceeded(&mut wr, false).await,
            r = rd.read(&mut rbuf[have..]) => {
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
                            flush(&mut rx, &mut wr, &mut wbuf).await;
                            break 'conn reason;
                        }
                    }
                    if conn.erred {
                        srv.m.bad_lines.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Some(first) = rx.recv() => {
                wbuf.clear();
                wbuf.extend_from_slice(&first);
                while wbuf.len() < WRITE_BATCH_BYTES {
                    match rx.try_recv() {
                        Ok(l) => wbuf.extend_from_slice(&l),
                        Err(_) => break,
                    }
                }
                let mut off = 0;
                while off < wbuf.len() {
                    tokio::select! {
                        r = wr.write(&wbuf[off..]) => match r {
                            Ok(n) if n > 0 => off += n,
                            _ => {
                                srv.m.conn_errors.fetch_add(1, Ordering::Relaxed);
                                break 'conn "Connection closed".into();
                            }
                        },
                        // the client stopped reading: the write is given up, maybe mid-line
                        _ = me.overflowed() => break 'conn sendq_exceeded(&mut wr, off > 0 && wbuf[off - 1] != b'\n').await,
                        () = stopping(&mut closing_mid_write) => break 'conn "Server stopping".into(),
                    }
                }
            }
        }
    };
    conn.leave(&reason).await;
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
async fn flush(rx: &mut mpsc::Receiver<Line>, wr: &mut OwnedWriteHalf, wbuf: &mut Vec<u8>) {
    wbuf.clear();
    while let Ok(l) = rx.try_recv() {
        wbuf.extend_from_slice(&l);
    }
    let _ = tokio::time::timeout(CLOSE_GRACE, wr.write_all(wbuf)).await;
}
