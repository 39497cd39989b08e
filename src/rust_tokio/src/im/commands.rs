//! The commands of the subset, run by the connection task (conn.rs) on its own state.

use super::Server;
use super::channel::{Channel, Op};
use super::client::{Client, Identity, Line, REG_CLOSED, REG_DONE, REG_NONE};
use super::conn::Conn;
use super::lock;
use super::proto::{self, CLIENT_HOST, Message};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The commands a client may send before it is registered; any other line gets 451.
const PRE_REGISTRATION: [&str; 5] = ["", "NICK", "USER", "QUIT", "PONG"];

impl Conn {
    /// The nick numerics are addressed to: "*" before NICK.
    fn target(&self) -> &str {
        if self.nick.is_empty() { "*" } else { &self.nick }
    }

    pub(super) fn numeric(&mut self, code: u16, params: &[&str]) {
        self.erred |= code >= 400;
        let line = self.srv.settings.protocol.numeric(code, self.target(), params);
        self.me.send(&self.srv, line.into());
    }

    /// nick!user@host, built at registration and at a nick change, not per message (the
    /// profile showed format! among the costs of a PRIVMSG).
    fn make_prefix(&self) -> String {
        format!("{}!{}@{CLIENT_HOST}", self.nick, self.user)
    }

    /// Runs one command; Some(reason) after QUIT.
    pub(super) async fn handle(&mut self, line: &str) -> Option<String> {
        let Some(Message { cmd, params: p }) = proto::parse(line) else {
            return None; // a prefix alone: ignored, as an empty line
        };
        #[cfg(test)]
        if cmd == "CRASHME" {
            panic!("test: the connection's task crashes"); // its monitor must clean up
        }
        if self.me.reg.load(Ordering::Acquire) != REG_DONE && !PRE_REGISTRATION.contains(&cmd.as_str()) {
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
            "MEMORY" => self.cmd_memory(),
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
        if !self.srv.claim_nick(&key, &self.me) {
            return self.numeric(433, &[nick, "Nickname is already in use"]);
        }
        if self.me.reg.load(Ordering::Acquire) == REG_NONE {
            (self.nick, self.key) = (nick.clone(), key);
            return self.try_register();
        }
        if key != self.key {
            self.srv.leave_sessions(&self.me, false); // they are keyed by the old nick
        }
        let line: Line = proto::from_user(&self.prefix, "NICK", &[], Some(nick)).into();
        (self.nick, self.key) = (nick.clone(), key);
        self.prefix = self.make_prefix();
        *lock(&self.me.ident) = Some(Arc::new(Identity {
            nick: nick.clone(),
            prefix: self.prefix.clone(),
        }));
        self.me.send(&self.srv, line.clone());
        let chans = lock(&self.me.channels).clone();
        for peer in peers_of(&self.me, chans, false).await {
            peer.send(&self.srv, line.clone());
        }
    }

    fn cmd_user(&mut self, p: &[String]) {
        if self.me.reg.load(Ordering::Acquire) != REG_NONE {
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
        self.prefix = self.make_prefix();
        let prefix = self.prefix.clone();
        *lock(&self.me.ident) = Some(Arc::new(Identity {
            nick: self.nick.clone(),
            prefix: prefix.clone(),
        }));
        if self
            .me
            .reg
            .compare_exchange(REG_NONE, REG_DONE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
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
        for t in targets.split(',') {
            let key = proto::fold(t);
            if t.starts_with('#') {
                let member = lock(&self.me.channels).get(&key).cloned();
                if let Some(ch) = member {
                    let line = proto::from_user(&self.prefix, "PRIVMSG", &[&ch.name], Some(text)).into();
                    ch.cast(Op::Msg(self.me.clone(), line));
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
                    let line = proto::from_user(&self.prefix, "PRIVMSG", &[&id.nick], Some(text)).into();
                    self.srv.route(&self.me, &to, &self.key, &key, line)
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
            let ch = {
                let mut mine = lock(&self.me.channels);
                // a dead client joins nothing: its clean-up took its channels
                if mine.contains_key(&key) || self.me.dead.load(Ordering::Acquire) {
                    continue;
                }
                let ch = self.srv.channel_for(&key, name, true).expect("created");
                mine.insert(key, ch.clone());
                ch
            };
            let line = proto::from_user(&self.prefix, "JOIN", &[&ch.name], None).into();
            ch.call(Op::Join(self.me.clone(), line)).await;
        }
    }

    async fn cmd_part(&mut self, p: &[String]) {
        let Some(names) = p.first().filter(|n| !n.is_empty()) else {
            return self.numeric(461, &["PART", "Not enough parameters"]);
        };
        for name in names.split(',') {
            let key = proto::fold(name);
            let removed = lock(&self.me.channels).remove(&key);
            let Some(ch) = removed else {
                if self.srv.channel_for(&key, "", false).is_some() {
                    self.numeric(442, &[name, "You're not on that channel"]);
                } else {
                    self.numeric(403, &[name, "No such channel"]);
                }
                continue;
            };
            let line = proto::from_user(&self.prefix, "PART", &[&ch.name], p.get(1).map(String::as_str)).into();
            ch.call(Op::Part(self.me.clone(), line)).await;
        }
    }

    /// MEMORY (outside RFC 2812, for measurement): tokio has no collector, so live memory
    /// is the resident set (/proc/self/status VmRSS, the same figure as /proc/self/statm's
    /// resident pages, already in bytes).
    fn cmd_memory(&mut self) {
        let rss = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        });
        let n = rss.map_or(0, |kb| kb * 1024);
        self.srv.m.live_bytes.store(n, Ordering::Relaxed);
        let name = &self.srv.settings.protocol.server_name;
        let text = format!("live_bytes {n}");
        let line = proto::from_user(name, "NOTICE", &[&self.nick], Some(&text));
        self.me.send(&self.srv, line.into());
    }
}

/// The other members of chans, each once; with leaving, c also leaves them.
async fn peers_of(c: &Arc<Client>, chans: HashMap<String, Arc<Channel>>, leaving: bool) -> Vec<Arc<Client>> {
    let mut out: Vec<Arc<Client>> = Vec::new();
    for ch in chans.into_values() {
        for m in ch.call(Op::Peers(c.clone(), leaving)).await {
            if !Arc::ptr_eq(&m, c) && !out.iter().any(|o| Arc::ptr_eq(o, &m)) {
                out.push(m);
            }
        }
    }
    out
}

/// The clean-up of an ended connection, run by its monitor (conn.rs) however its task
/// ended: its nick is freed first (at once), then it leaves its sessions and its channels,
/// whose members get its QUIT.
pub(super) async fn cleanup(srv: &Arc<Server>, me: &Arc<Client>, reason: &str) {
    me.dead.store(true, Ordering::Release);
    Server::remove_conn_locked(&mut lock(&srv.conns), me);
    srv.release_nick(me);
    srv.leave_sessions(me, true);
    let chans = std::mem::take(&mut *lock(&me.channels));
    let peers = peers_of(me, chans, true).await;
    if me.reg.swap(REG_CLOSED, Ordering::AcqRel) == REG_DONE {
        let prefix = me.identity().map(|i| i.prefix.clone()).unwrap_or_default();
        let line: Line = proto::from_user(&prefix, "QUIT", &[], Some(reason)).into();
        for peer in peers {
            peer.send(srv, line.clone());
        }
        srv.m.registered_now.fetch_sub(1, Ordering::AcqRel);
    }
}
