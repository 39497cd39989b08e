//! The commands of the subset, run by the connection task (conn.rs) on its own state.

use super::channel::{Channel, Op};
use super::client::{Client, Identity, Line};
use super::conn::Conn;
use super::lock;
use super::proto::{self, CLIENT_HOST, Message};
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

    fn prefix(&self) -> String {
        format!("{}!{}@{CLIENT_HOST}", self.nick, self.user)
    }

    /// Runs one command; Some(reason) after QUIT.
    pub(super) async fn handle(&mut self, line: &str) -> Option<String> {
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
    pub(super) async fn leave(&mut self, reason: &str) {
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
