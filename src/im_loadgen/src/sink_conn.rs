//! The null sink's clients and what it answers (sink.rs runs the loop): NICK and USER
//! register (001; 433 for a nick in use), PING gets PONG, a PRIVMSG to a nick is relayed to
//! that client as `:<nick>!<user>@127.0.0.1 PRIVMSG <target> :<text>`, JOIN adds to a
//! channel (JOIN echoed to every member, 353 and 366 to the joiner) and a channel PRIVMSG
//! is relayed to every other member; PART, QUIT and MEMORY (a NOTICE with the RSS). Each
//! client's output is batched over one poll's events and written once (flush_dirty).
//! The send queue counts a line from its queuing until the write containing it returns;
//! one more than --sendq-lines disconnects with `ERROR :SendQ exceeded`.

use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry, Token};
use std::collections::HashMap;
use std::io::{self, Read, Write};

const SERVER: &str = "irc.serverbench";
const READ_BYTES: usize = 256 * 1024;

struct Client {
    stream: TcpStream,
    partial: Vec<u8>,
    out: Vec<u8>,
    written: usize,
    queued: usize,
    nick: Option<Vec<u8>>,
    user: Option<Vec<u8>>,
    registered: bool,
    channels: Vec<Vec<u8>>,
    dirty: bool,
    /// `:<nick>!<user>@127.0.0.1`, kept for the relayed lines
    prefix: Vec<u8>,
}

#[derive(Default)]
pub struct Counts {
    pub accepted: u64,
    pub registered: u64,
    pub registered_max: u64,
    pub routed: u64,
    pub channel_deliveries: u64,
    pub sendq_disconnects: u64,
    pub bad_lines: u64,
    pub connection_errors: u64,
    pub live_bytes: Option<u64>,
}

pub struct Hub {
    clients: Vec<Option<Client>>,
    free: Vec<usize>,
    /// closed during this poll's events: reusable only after flush_dirty, so that no index
    /// queued in `dirty`, `doomed` or `quitting` can name a newer client
    freed: Vec<usize>,
    nicks: HashMap<Vec<u8>, usize>,
    channels: HashMap<Vec<u8>, Vec<usize>>,
    dirty: Vec<usize>,
    /// over the send queue: told ERROR :SendQ exceeded and closed after this poll's events
    doomed: Vec<usize>,
    /// sent QUIT: their output written, then closed
    quitting: Vec<usize>,
    scratch: Vec<u8>,
    sendq_lines: usize,
    pub counts: Counts,
}

fn key(nick: &[u8]) -> Vec<u8> {
    nick.to_ascii_lowercase()
}

impl Hub {
    pub fn new(sendq_lines: usize) -> Hub {
        Hub {
            clients: Vec::new(),
            free: Vec::new(),
            freed: Vec::new(),
            nicks: HashMap::new(),
            channels: HashMap::new(),
            dirty: Vec::new(),
            doomed: Vec::new(),
            quitting: Vec::new(),
            scratch: vec![0; READ_BYTES],
            sendq_lines,
            counts: Counts::default(),
        }
    }

    pub fn open(&self) -> usize {
        self.clients.len() - self.free.len() - self.freed.len()
    }

    pub fn accept_all(&mut self, listener: &TcpListener, reg: &Registry) {
        loop {
            let mut stream = match listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return, // e.g. out of descriptors: the next readiness retries
            };
            let _ = stream.set_nodelay(true);
            let i = self.free.pop().unwrap_or_else(|| {
                self.clients.push(None);
                self.clients.len() - 1
            });
            if reg
                .register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE)
                .is_err()
            {
                self.free.push(i);
                continue;
            }
            self.counts.accepted += 1;
            self.clients[i] = Some(Client {
                stream,
                partial: Vec::new(),
                out: Vec::new(),
                written: 0,
                queued: 0,
                nick: None,
                user: None,
                registered: false,
                channels: Vec::new(),
                dirty: false,
                prefix: Vec::new(),
            });
        }
    }

    pub fn on_ready(&mut self, i: usize, readable: bool, writable: bool, reg: &Registry) {
        if self.clients.get(i).is_none_or(|c| c.is_none()) {
            return;
        }
        if writable {
            self.mark(i);
        }
        if readable {
            let mut scratch = std::mem::take(&mut self.scratch);
            let open = self.read(i, &mut scratch);
            self.scratch = scratch;
            if !open {
                self.close(i, reg);
            }
        }
    }

    /// Reads until the socket is drained and handles each whole line; false at its end.
    fn read(&mut self, i: usize, buf: &mut [u8]) -> bool {
        loop {
            let Some(c) = self.clients[i].as_mut() else {
                return false;
            };
            let n = match c.stream.read(buf) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.counts.connection_errors += 1;
                    return false;
                }
            };
            let mut data = &buf[..n];
            let mut partial = std::mem::take(&mut c.partial);
            while let Some(k) = data.iter().position(|&b| b == b'\n') {
                if partial.is_empty() {
                    self.line(i, trim(&data[..k]));
                } else {
                    partial.extend_from_slice(&data[..k]);
                    self.line(i, trim(&partial));
                    partial.clear();
                }
                data = &data[k + 1..];
            }
            partial.extend_from_slice(data);
            match self.clients[i].as_mut() {
                Some(c) => c.partial = partial,
                None => return false,
            }
            if n < buf.len() {
                return true; // drained: a later arrival is a new edge
            }
        }
    }

    fn mark(&mut self, i: usize) {
        if let Some(c) = self.clients[i].as_mut()
            && !c.dirty
        {
            c.dirty = true;
            self.dirty.push(i);
        }
    }

    /// Queues one line (CR LF added) for client i; over --sendq-lines it is doomed instead.
    fn send(&mut self, i: usize, parts: &[&[u8]]) {
        let Some(c) = self.clients[i].as_mut() else { return };
        if c.queued >= self.sendq_lines {
            if c.queued != usize::MAX {
                c.queued = usize::MAX; // doomed once
                self.counts.sendq_disconnects += 1;
                self.doomed.push(i);
            }
            return;
        }
        parts.iter().for_each(|p| c.out.extend_from_slice(p));
        c.out.extend_from_slice(b"\r\n");
        c.queued += 1;
        self.mark(i);
    }

    fn numeric(&mut self, i: usize, code: &str, rest: &[u8]) {
        let nick = self.clients[i]
            .as_ref()
            .and_then(|c| c.nick.clone())
            .unwrap_or_else(|| b"*".to_vec());
        let head = format!(":{SERVER} {code} ");
        self.send(i, &[head.as_bytes(), &nick, b" ", rest]);
        if code.starts_with('4') {
            self.counts.bad_lines += 1;
        }
    }

    /// Writes every client's batch once; then drops the doomed ones.
    pub fn flush_dirty(&mut self, reg: &Registry) {
        for i in std::mem::take(&mut self.dirty) {
            let Some(c) = self.clients[i].as_mut() else { continue };
            c.dirty = false;
            if c.queued == usize::MAX {
                continue;
            }
            let ok = flush(c);
            if !ok {
                self.counts.connection_errors += 1;
                self.close(i, reg);
            }
        }
        for i in std::mem::take(&mut self.doomed) {
            if let Some(c) = self.clients[i].as_mut() {
                c.out.clear();
                c.written = 0;
                c.out.extend_from_slice(b"ERROR :SendQ exceeded\r\n");
                flush(c);
            }
            self.close(i, reg);
        }
        for i in std::mem::take(&mut self.quitting) {
            if let Some(c) = self.clients[i].as_mut() {
                flush(c);
            }
            self.close(i, reg);
        }
        self.free.append(&mut self.freed);
    }

    pub fn close(&mut self, i: usize, reg: &Registry) {
        let Some(mut c) = self.clients[i].take() else { return };
        let _ = reg.deregister(&mut c.stream);
        if let Some(n) = &c.nick
            && self.nicks.get(&key(n)) == Some(&i)
        {
            self.nicks.remove(&key(n));
        }
        for ch in &c.channels {
            if let Some(m) = self.channels.get_mut(ch) {
                m.retain(|&j| j != i);
                if m.is_empty() {
                    self.channels.remove(ch);
                }
            }
        }
        if c.registered {
            self.counts.registered -= 1;
        }
        self.freed.push(i);
    }

    pub fn close_all(&mut self, reg: &Registry) {
        (0..self.clients.len()).for_each(|i| self.close(i, reg));
    }

    /// The prefix `:<nick>!<user>@127.0.0.1` of client i's relayed lines.
    fn prefix(&self, i: usize) -> Vec<u8> {
        self.clients[i].as_ref().map(|c| c.prefix.clone()).unwrap_or_default()
    }

    fn set_prefix(&mut self, i: usize) {
        let c = self.clients[i].as_mut().expect("a live client");
        let mut p = b":".to_vec();
        p.extend_from_slice(c.nick.as_deref().unwrap_or(b"*"));
        p.push(b'!');
        p.extend_from_slice(c.user.as_deref().unwrap_or(b"*"));
        p.extend_from_slice(b"@127.0.0.1");
        c.prefix = p;
    }
}

fn flush(c: &mut Client) -> bool {
    while c.written < c.out.len() {
        match c.stream.write(&c.out[c.written..]) {
            Ok(0) => return false,
            Ok(n) => c.written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // lines not yet written still count against the send queue
                c.queued = c.out[c.written..].iter().filter(|&&b| b == b'\n').count();
                return true;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    c.out.clear();
    c.written = 0;
    c.queued = 0;
    true
}

fn trim(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[path = "sink_irc.rs"]
mod irc_cmds;
