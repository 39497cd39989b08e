//! A connection: one task reads lines, handles each command and writes its own socket from
//! the client's bounded send queue, which every other task (sessions, channels) fills
//! without waiting; a full queue disconnects the client (ERROR :SendQ exceeded, counted).

use super::channel::{Channel, Op};
use super::proto::{self, CLIENT_HOST, Message};
use super::session::Session;
use super::{Server, lock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{Notify, mpsc, watch};

/// One line on the wire, CRLF included; shared by every receiver of a fan-out.
pub type Line = Arc<[u8]>;

const READ_BUFFER_BYTES: usize = 4096;
/// Lines are gathered into one write up to this many bytes.
const WRITE_BATCH_BYTES: usize = 65536;
/// How long the last lines (ERROR, a QUIT's reply) may take to leave.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// A registered client's nick, for the tasks that read it.
pub struct Identity {
    pub nick: String,
}

/// What other tasks hold of a connection.
pub struct Client {
    tx: mpsc::Sender<Line>,
    over: AtomicBool,
    kill: Notify,
    ident: Mutex<Option<Arc<Identity>>>,
    /// guarded by the Sessions lock (taken first)
    pub(super) sessions: Mutex<Vec<Arc<Session>>>,
    /// set under the Sessions lock
    pub(super) left: AtomicBool,
}

impl Client {
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

    fn identity(&self) -> Option<Arc<Identity>> {
        lock(&self.ident).clone()
    }

    /// The nick, "*" before registration.
    pub fn nick(&self) -> String {
        self.identity().map_or_else(|| "*".into(), |i| i.nick.clone())
    }
}

/// The commands a client may send before it is registered; any other line gets 451.
const PRE_REGISTRATION: [&str; 5] = ["", "NICK", "USER", "QUIT", "PONG"];

/// The connection task's own state.
struct Conn {
    srv: Arc<Server>,
    me: Arc<Client>,
    nick: String,
    key: String, // the folded nick
    user: String,
    registered: bool,
    channels: HashMap<String, Arc<Channel>>,
    /// the line being handled was answered with an error numeric
    erred: bool,
}

/// Runs one connection until it ends, then takes it out of every registry.
pub async fn connection(srv: Arc<Server>, stream: TcpStream, mut closing: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::channel::<Line>(srv.settings.sendq_lines);
    let me = Arc::new(Client {
        tx,
        over: AtomicBool::new(false),
        kill: Notify::new(),
        ident: Mutex::new(None),
        sessions: Mutex::new(Vec::new()),
        left: AtomicBool::new(false),
    });
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
            _ = me.kill.notified() => break sendq_exceeded(&mut wr, false).await,
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
                        _ = me.kill.notified() => break 'conn sendq_exceeded(&mut wr, off > 0 && wbuf[off - 1] != b'\n').await,
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

impl Conn {
    /// The nick numerics are addressed to: "*" before NICK.
    fn target(&self) -> &str {
        if self.nick.is_empty() { "*" } else { &self.nick }
    }

    fn numeric(&mut self, code: u16, params: &[&str]) {
        self.erred |= code >= 400;
        let line = self.srv.settings.protocol.numeric(code, self.target(), params);
        self.me.send(&self.srv, line.into());
    }

    fn prefix(&self) -> String {
        format!("{}!{}@{CLIENT_HOST}", self.nick, self.user)
    }

    /// Runs one command; Some(reason) after QUIT.
    async fn handle(&mut self, line: &str) -> Option<String> {
        let Some(Message { cmd, params: p }) = proto::parse(line) else {
            return None; // a prefix alone: ignored, as an empty line
        };
        if !self.registered && !PRE_REGISTRATION.contains(&cmd.as_str()) {
            self.numeric(451, &["You have not registered"]);
            return None;
        }
        match cmd.as_str() {
            "" | "PONG" => {}
            "NICK" => self.cmd_nick(&p).await,
            "USER" => self.cmd_user(&p),
            "QUIT" => {
                self.me.send(&self.srv, Arc::from(&b"ERROR :Closing Link\r\n"[..]));
                return Some(
                    p.first()
                        .filter(|r| !r.is_empty())
                        .cloned()
                        .unwrap_or_else(|| "Client Quit".into()),
                );
            }
            "PING" => match p.first() {
                None => self.numeric(409, &["No origin specified"]),
                Some(tok) => {
                    let name = &self.srv.settings.protocol.server_name;
                    self.me
                        .send(&self.srv, proto::from_user(name, "PONG", &[name], Some(tok)).into());
                }
            },
            "PRIVMSG" => self.cmd_privmsg(&p).await,
            "JOIN" => self.cmd_join(&p).await,
            "PART" => self.cmd_part(&p).await,
            _ => self.numeric(421, &[&cmd, "Unknown command"]),
        }
        None
    }

    async fn cmd_nick(&mut self, p: &[String]) {
        let Some(nick) = p.first().filter(|n| !n.is_empty()) else {
            return self.numeric(431, &["No nickname given"]);
        };
        if !self.srv.settings.protocol.valid_nick(nick) {
            return self.numeric(432, &[nick, "Erroneous nickname"]);
        }
        let key = proto::fold(nick);
        let old_key = (!self.key.is_empty()).then_some(self.key.as_str());
        if !self.srv.claim_nick(&key, old_key, &self.me) {
            return self.numeric(433, &[nick, "Nickname is already in use"]);
        }
        if !self.registered {
            (self.nick, self.key) = (nick.clone(), key);
            return self.try_register();
        }
        if key != self.key {
            self.srv.leave_sessions(&self.me, false); // they are keyed by the old nick
        }
        let line: Line = proto::from_user(&self.prefix(), "NICK", &[], Some(nick)).into();
        (self.nick, self.key) = (nick.clone(), key);
        *lock(&self.me.ident) = Some(Arc::new(Identity { nick: nick.clone() }));
        self.me.send(&self.srv, line.clone());
        for peer in self.peers(false).await {
            peer.send(&self.srv, line.clone());
        }
    }

    fn cmd_user(&mut self, p: &[String]) {
        if self.registered {
            return self.numeric(462, &["You may not reregister"]);
        }
        if p.len() < 4 {
            return self.numeric(461, &["USER", "Not enough parameters"]);
        }
        self.user = p[0].clone();
        self.try_register();
    }

    fn try_register(&mut self) {
        if self.nick.is_empty() || self.user.is_empty() {
            return;
        }
        let prefix = self.prefix();
        *lock(&self.me.ident) = Some(Arc::new(Identity {
            nick: self.nick.clone(),
        }));
        self.registered = true;
        self.srv.registered_one();
        self.numeric(1, &[&format!("Welcome to the serverbench IRC network {prefix}")]);
    }

    async fn cmd_privmsg(&mut self, p: &[String]) {
        let Some(targets) = p.first().filter(|t| !t.is_empty()) else {
            return self.numeric(411, &["No recipient given (PRIVMSG)"]);
        };
        let Some(text) = p.get(1).filter(|t| !t.is_empty()) else {
            return self.numeric(412, &["No text to send"]);
        };
        let prefix = self.prefix();
        for t in targets.split(',') {
            let key = proto::fold(t);
            if t.starts_with('#') {
                if let Some(ch) = self.channels.get(&key) {
                    let line = proto::from_user(&prefix, "PRIVMSG", &[&ch.name], Some(text)).into();
                    ch.call(Op::Msg(self.me.clone(), line)).await;
                } else if self.srv.channel_for(&key, "", false).is_some() {
                    self.numeric(404, &[t, "Cannot send to channel"]);
                } else {
                    self.numeric(403, &[t, "No such channel"]);
                }
                continue;
            }
            let to = self.srv.lookup_nick(&key);
            let to_id = to.as_ref().and_then(|c| c.identity());
            let delivered = match (to, to_id) {
                (Some(to), Some(id)) => {
                    let line = proto::from_user(&prefix, "PRIVMSG", &[&id.nick], Some(text)).into();
                    self.srv.route(&self.me, &to, &self.key, &key, line).await
                }
                _ => false,
            };
            if !delivered {
                self.numeric(401, &[t, "No such nick/channel"]);
            }
        }
    }

    async fn cmd_join(&mut self, p: &[String]) {
        let Some(names) = p.first().filter(|n| !n.is_empty()) else {
            return self.numeric(461, &["JOIN", "Not enough parameters"]);
        };
        for name in names.split(',') {
            if !self.srv.settings.protocol.valid_channel(name) {
                self.numeric(403, &[name, "No such channel"]);
                continue;
            }
            let key = proto::fold(name);
            if self.channels.contains_key(&key) {
                continue;
            }
            let ch = self.srv.channel_for(&key, name, true).expect("created");
            let line = proto::from_user(&self.prefix(), "JOIN", &[&ch.name], None).into();
            self.channels.insert(key, ch.clone());
            ch.call(Op::Join(self.me.clone(), line)).await;
        }
    }

    async fn cmd_part(&mut self, p: &[String]) {
        let Some(names) = p.first().filter(|n| !n.is_empty()) else {
            return self.numeric(461, &["PART", "Not enough parameters"]);
        };
        for name in names.split(',') {
            let key = proto::fold(name);
            let Some(ch) = self.channels.remove(&key) else {
                if self.srv.channel_for(&key, "", false).is_some() {
                    self.numeric(442, &[name, "You're not on that channel"]);
                } else {
                    self.numeric(403, &[name, "No such channel"]);
                }
                continue;
            };
            let line = proto::from_user(&self.prefix(), "PART", &[&ch.name], p.get(1).map(String::as_str)).into();
            ch.call(Op::Part(self.me.clone(), line)).await;
        }
    }

    /// The other members of c's channels, each once; with leaving, c also leaves them.
    async fn peers(&mut self, leaving: bool) -> Vec<Arc<Client>> {
        let mut out: Vec<Arc<Client>> = Vec::new();
        let chans: Vec<Arc<Channel>> = if leaving {
            self.channels.drain().map(|(_, c)| c).collect()
        } else {
            self.channels.values().cloned().collect()
        };
        for ch in chans {
            for m in ch.call(Op::Peers(self.me.clone(), leaving)).await {
                if !out.iter().any(|o| Arc::ptr_eq(o, &m)) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// Takes a closing connection out of its sessions, its channels (relaying its QUIT to
    /// their members) and the nick registry.
    async fn leave(&mut self, reason: &str) {
        self.srv.leave_sessions(&self.me, true);
        if self.registered {
            let line: Line = proto::from_user(&self.prefix(), "QUIT", &[], Some(reason)).into();
            for peer in self.peers(true).await {
                peer.send(&self.srv, line.clone());
            }
            self.srv.m.registered_now.fetch_sub(1, Ordering::AcqRel);
        }
        if !self.key.is_empty() {
            self.srv.release_nick(&self.key, &self.me);
        }
    }
}
