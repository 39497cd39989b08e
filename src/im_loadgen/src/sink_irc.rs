//! What the null sink does with each line (the commands sink_conn.rs lists).

use super::{Hub, SERVER, key};
use crate::irc;

/// Longest 353 line's names part, so a reply stays within 512 bytes.
const NAMES_BYTES: usize = 400;

impl Hub {
    pub(super) fn line(&mut self, i: usize, line: &[u8]) {
        let Some(l) = irc::parse(line) else { return };
        let registered = self.clients[i].as_ref().is_some_and(|c| c.registered);
        let upper;
        let cmd = if l.command.iter().any(u8::is_ascii_lowercase) {
            upper = l.command.to_ascii_uppercase();
            &upper[..]
        } else {
            l.command
        };
        match cmd {
            b"PRIVMSG" if registered => self.privmsg(i, l.first, l.last),
            b"PING" => {
                let token = l.last.unwrap_or(SERVER.as_bytes());
                let head = format!(":{SERVER} PONG {SERVER} :");
                self.send(i, &[head.as_bytes(), token]);
            }
            b"PONG" => {}
            b"NICK" => self.nick(i, l.first),
            b"USER" => match (registered, l.first) {
                (true, _) => self.numeric(i, "462", b":You may not reregister"),
                (_, None) => self.numeric(i, "461", b"USER :Not enough parameters"),
                (_, Some(u)) => {
                    let u = u.to_vec();
                    self.clients[i].as_mut().expect("live").user = Some(u);
                    self.set_prefix(i);
                    self.welcome(i);
                }
            },
            b"JOIN" if registered => match l.first {
                Some(chans) => chans.split(|&b| b == b',').for_each(|ch| self.join(i, ch)),
                None => self.numeric(i, "461", b"JOIN :Not enough parameters"),
            },
            b"PART" if registered => {
                if let Some(chans) = l.first {
                    chans.split(|&b| b == b',').for_each(|ch| self.part(i, ch));
                }
            }
            b"MEMORY" if registered => {
                let n = crate::os::rss_bytes();
                self.counts.live_bytes = Some(n);
                let nick = self.clients[i]
                    .as_ref()
                    .and_then(|c| c.nick.clone())
                    .unwrap_or_default();
                let head = format!(":{SERVER} NOTICE ");
                self.send(i, &[head.as_bytes(), &nick, format!(" :live_bytes {n}").as_bytes()]);
            }
            b"QUIT" => {
                let prefix = self.prefix(i);
                let chans = self.clients[i].as_ref().map(|c| c.channels.clone()).unwrap_or_default();
                let mut told = vec![i];
                for ch in chans {
                    for j in self.channels.get(&ch).cloned().unwrap_or_default() {
                        if !told.contains(&j) {
                            told.push(j);
                            self.send(j, &[&prefix, b" QUIT :", l.last.unwrap_or(b"Quit")]);
                        }
                    }
                }
                self.send(i, &[b"ERROR :Closing Link"]);
                self.quitting.push(i); // written, then closed, after this poll's events
            }
            b"PRIVMSG" | b"JOIN" | b"PART" | b"MEMORY" => self.numeric(i, "451", b":You have not registered"),
            cmd => {
                let mut rest = cmd.to_vec();
                rest.extend_from_slice(b" :Unknown command");
                self.numeric(i, "421", &rest);
            }
        }
    }

    fn nick(&mut self, i: usize, nick: Option<&[u8]>) {
        let Some(n) = nick.filter(|n| !n.is_empty()) else {
            return self.numeric(i, "431", b":No nickname given");
        };
        match self.nicks.get(&key(n)) {
            Some(&j) if j == i => return,
            Some(_) => {
                let mut rest = n.to_vec();
                rest.extend_from_slice(b" :Nickname is already in use");
                return self.numeric(i, "433", &rest);
            }
            None => {}
        }
        let c = self.clients[i].as_mut().expect("live");
        if let Some(old) = c.nick.replace(n.to_vec()) {
            self.nicks.remove(&key(&old));
        }
        self.nicks.insert(key(n), i);
        self.set_prefix(i);
        self.welcome(i);
    }

    /// Registers client i once it has both a nick and a user.
    fn welcome(&mut self, i: usize) {
        let c = self.clients[i].as_mut().expect("live");
        if c.registered || c.nick.is_none() || c.user.is_none() {
            return;
        }
        c.registered = true;
        self.counts.registered += 1;
        self.counts.registered_max = self.counts.registered_max.max(self.counts.registered);
        let prefix = self.prefix(i);
        let text = format!(
            " :Welcome to the serverbench IRC network {}",
            String::from_utf8_lossy(&prefix[1..])
        );
        self.numeric(i, "001", text.trim_start().as_bytes());
    }

    fn privmsg(&mut self, i: usize, target: Option<&[u8]>, text: Option<&[u8]>) {
        let (Some(t), Some(text)) = (target, text) else {
            return self.numeric(i, "461", b"PRIVMSG :Not enough parameters");
        };
        let prefix = std::mem::take(&mut self.clients[i].as_mut().expect("live").prefix);
        self.relay(i, t, &[&prefix, b" PRIVMSG ", t, b" :", text]);
        if let Some(c) = self.clients[i].as_mut() {
            c.prefix = prefix;
        }
    }

    fn relay(&mut self, i: usize, t: &[u8], parts: &[&[u8]]) {
        if t.starts_with(b"#") {
            let Some(members) = self.channels.get(&key(t)).cloned() else {
                let mut rest = t.to_vec();
                rest.extend_from_slice(b" :No such channel");
                return self.numeric(i, "403", &rest);
            };
            for j in members.into_iter().filter(|&j| j != i) {
                self.counts.channel_deliveries += 1;
                self.send(j, parts);
            }
        } else if let Some(j) = self.nick_of(t) {
            self.counts.routed += 1;
            self.send(j, parts);
        } else {
            let mut rest = t.to_vec();
            rest.extend_from_slice(b" :No such nick/channel");
            self.numeric(i, "401", &rest);
        }
    }

    /// The client a nick names (no allocation when it is lower case already, as ours are).
    fn nick_of(&self, t: &[u8]) -> Option<usize> {
        if t.iter().any(u8::is_ascii_uppercase) {
            self.nicks.get(&key(t)).copied()
        } else {
            self.nicks.get(t).copied()
        }
    }

    fn join(&mut self, i: usize, ch: &[u8]) {
        if !ch.starts_with(b"#") || ch.len() > 50 {
            let mut rest = ch.to_vec();
            rest.extend_from_slice(b" :No such channel");
            return self.numeric(i, "403", &rest);
        }
        let k = key(ch);
        let members = self.channels.entry(k.clone()).or_default();
        if members.contains(&i) {
            return;
        }
        members.push(i);
        let members = members.clone();
        self.clients[i].as_mut().expect("live").channels.push(k);
        let prefix = self.prefix(i);
        members.iter().for_each(|&j| self.send(j, &[&prefix, b" JOIN ", ch]));
        let mut names: Vec<u8> = Vec::new();
        for &j in &members {
            let n = self.clients[j]
                .as_ref()
                .and_then(|c| c.nick.clone())
                .unwrap_or_default();
            if names.len() + n.len() + 1 > NAMES_BYTES {
                self.names_line(i, ch, &names);
                names.clear();
            }
            if !names.is_empty() {
                names.push(b' ');
            }
            names.extend_from_slice(&n);
        }
        self.names_line(i, ch, &names);
        let mut end = ch.to_vec();
        end.extend_from_slice(b" :End of /NAMES list.");
        self.numeric(i, "366", &end);
    }

    fn names_line(&mut self, i: usize, ch: &[u8], names: &[u8]) {
        let mut rest = b"= ".to_vec();
        rest.extend_from_slice(ch);
        rest.extend_from_slice(b" :");
        rest.extend_from_slice(names);
        self.numeric(i, "353", &rest);
    }

    fn part(&mut self, i: usize, ch: &[u8]) {
        let k = key(ch);
        let Some(members) = self.channels.get(&k).cloned().filter(|m| m.contains(&i)) else {
            let mut rest = ch.to_vec();
            rest.extend_from_slice(b" :You're not on that channel");
            return self.numeric(i, "442", &rest);
        };
        let prefix = self.prefix(i);
        members.iter().for_each(|&j| self.send(j, &[&prefix, b" PART ", ch]));
        if let Some(m) = self.channels.get_mut(&k) {
            m.retain(|&j| j != i);
            if m.is_empty() {
                self.channels.remove(&k);
            }
        }
        if let Some(c) = self.clients[i].as_mut() {
            c.channels.retain(|c| *c != k);
        }
    }
}
