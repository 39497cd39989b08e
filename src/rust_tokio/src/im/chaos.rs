//! The chaos monkey: every --chaos-interval-ms it kills one live process of
//! --chaos-target (session, channel, connection, or any of them uniformly), picked at
//! random among all, or ("queued") among those whose mailbox holds something at that moment
//! (at random among all when none does) and held until the next tick, when it is killed.
//! Seeded by --seed (SplitMix64).

use super::channel::Env;
use super::client::Client;
use super::mailbox::Tx;
use super::session::{Routed, Session, Supervisor};
use super::{Server, lock};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// SplitMix64: the chaos monkey's seeded choices.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One drawn process, with the sending end of the mailbox a hold stops (a connection's
/// writer is held on the client itself).
enum Victim {
    Session(Arc<Session>, Option<Tx<Routed>>),
    Channel(String, Option<Tx<Env>>),
    Conn(Arc<Client>),
}

impl Victim {
    fn set_held(&self, held: bool) {
        match self {
            Victim::Session(_, tx) => tx.iter().for_each(|t| t.set_held(held)),
            Victim::Channel(_, tx) => tx.iter().for_each(|t| t.set_held(held)),
            Victim::Conn(c) => c.set_held(held),
        }
    }
}

pub struct Monkey {
    srv: Arc<Server>,
    rng: SplitMix,
    /// which kinds it strikes: sessions, channels, connections
    kinds: (bool, bool, bool),
    queued: bool,
    /// under pick queued: the victim drawn and held at the last tick
    held: Option<Victim>,
}

impl Monkey {
    pub fn new(srv: &Arc<Server>) -> Monkey {
        let kinds = match srv.settings.chaos_target.as_str() {
            "channel" => (false, true, false),
            "connection" => (false, false, true),
            "any" => (true, true, true),
            _ => (true, false, false),
        };
        Monkey {
            srv: srv.clone(),
            rng: SplitMix(srv.settings.seed),
            kinds,
            queued: srv.settings.chaos_pick == "queued",
            held: None,
        }
    }

    /// Kills one victim: under pick random one drawn now; under pick queued the one drawn
    /// and held at the last tick, then draws and holds the next (still registered, it takes
    /// nothing off its mailbox, so what is sent to it waits there for the kill: a server
    /// that keeps up has no queue to lose otherwise).
    pub fn strike(&mut self, sup: &mut Supervisor) {
        if !self.queued {
            if let Some(v) = self.draw(false) {
                self.kill(sup, &v);
            }
            return;
        }
        if let Some(v) = self.held.take() {
            self.kill(sup, &v);
            v.set_held(false); // one that ended meanwhile goes on; a killed one is gone
        }
        self.held = self.draw(true);
        if let Some(v) = &self.held {
            v.set_held(true);
        }
    }

    /// Kills v under its registry's lock if it is still live then.
    fn kill(&self, sup: &mut Supervisor, v: &Victim) {
        let srv = &self.srv;
        match v {
            Victim::Session(s, _) => {
                let _reg = lock(&srv.sessions);
                sup.kill(s); // a no-op if it ended meanwhile
            }
            Victim::Channel(key, _) => {
                let reg = lock(&srv.channels);
                if let Some(ch) = reg.get(key) {
                    srv.kill_channel(ch);
                }
            }
            Victim::Conn(c) => srv.kill_conn(&mut lock(&srv.conns), c),
        }
    }

    /// Draws a victim: with queued, among those whose mailbox holds something if any does;
    /// else uniformly among all. Each registry is read under its own lock.
    fn draw(&mut self, queued: bool) -> Option<Victim> {
        let srv = self.srv.clone();
        let (ks, kc, kn) = self.kinds;
        if queued {
            let mut vs: Vec<Victim> = Vec::new();
            if ks {
                let reg = lock(&srv.sessions);
                vs.extend(
                    reg.live
                        .iter()
                        .filter(|s| s.queued() > 0)
                        .map(|s| Victim::Session(s.clone(), s.mailbox())),
                );
            }
            if kc {
                let reg = lock(&srv.channels);
                vs.extend(
                    reg.iter()
                        .filter(|(_, c)| c.queued() > 0)
                        .map(|(k, c)| Victim::Channel(k.clone(), c.mailbox())),
                );
            }
            if kn {
                vs.extend(
                    lock(&srv.conns)
                        .iter()
                        .filter(|c| c.queued() > 0)
                        .map(|c| Victim::Conn(c.clone())),
                );
            }
            if !vs.is_empty() {
                let i = self.rng.below(vs.len());
                return Some(vs.swap_remove(i));
            }
        }
        let n_s = if ks { lock(&srv.sessions).live.len() } else { 0 };
        let n_c = if kc { lock(&srv.channels).len() } else { 0 };
        let n_n = if kn { lock(&srv.conns).len() } else { 0 };
        if n_s + n_c + n_n == 0 {
            return None;
        }
        // drawn over the counts just read: a registry that shrank meanwhile makes this
        // strike a miss, not a biased choice
        let i = self.rng.below(n_s + n_c + n_n);
        if i < n_s {
            let reg = lock(&srv.sessions);
            reg.live.get(i).map(|s| Victim::Session(s.clone(), s.mailbox()))
        } else if i < n_s + n_c {
            let reg = lock(&srv.channels);
            reg.iter()
                .nth(i - n_s)
                .map(|(k, c)| Victim::Channel(k.clone(), c.mailbox()))
        } else {
            lock(&srv.conns).get(i - n_s - n_c).map(|c| Victim::Conn(c.clone()))
        }
    }
}

impl Server {
    /// Chaos's act on a connection (the connections lock held): out of the registry and its
    /// nick freed at once, its task aborted (it handles no line after the one in hand; its
    /// socket closes, the client reads end of file), its send queue discarded (counted); its
    /// monitor then cleans up (channels, sessions, QUIT relay).
    pub(super) fn kill_conn(&self, reg: &mut Vec<Arc<Client>>, c: &Arc<Client>) {
        if !Server::remove_conn_locked(reg, c) {
            return;
        }
        self.release_nick(c);
        self.m.dropped.fetch_add(c.waiting() as i64, Ordering::Relaxed);
        if let Some(h) = lock(&c.task).as_ref() {
            h.abort();
        }
        self.m.conns_killed.fetch_add(1, Ordering::Relaxed);
    }
}
