//! The chaos monkey: every --chaos-interval-ms it kills one live process of
//! --chaos-target (session, channel, connection, or any of them uniformly), picked at
//! random among all, or ("queued") among those whose mailbox holds something at that moment
//! (at random among all when none does). Seeded by --seed (SplitMix64).

use super::client::Client;
use super::session::{Session, Supervisor};
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

pub struct Monkey {
    srv: Arc<Server>,
    rng: SplitMix,
    /// which kinds it strikes: sessions, channels, connections
    kinds: (bool, bool, bool),
    queued: bool,
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
        }
    }

    /// Kills one victim. Each registry is read under its own lock; the victim is killed
    /// under its registry's lock if it is still live then.
    pub fn strike(&mut self, sup: &mut Supervisor) {
        let srv = self.srv.clone();
        let (ks, kc, kn) = self.kinds;
        if self.queued {
            let ss: Vec<Arc<Session>> = if ks {
                lock(&srv.sessions)
                    .live
                    .iter()
                    .filter(|s| s.queued() > 0)
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            };
            let cs: Vec<String> = if kc {
                lock(&srv.channels)
                    .iter()
                    .filter(|(_, c)| c.queued() > 0)
                    .map(|(k, _)| k.clone())
                    .collect()
            } else {
                Vec::new()
            };
            let ns: Vec<Arc<Client>> = if kn {
                lock(&srv.conns).iter().filter(|c| c.queued() > 0).cloned().collect()
            } else {
                Vec::new()
            };
            let n = ss.len() + cs.len() + ns.len();
            if n > 0 {
                let i = self.rng.below(n);
                if i < ss.len() {
                    let _reg = lock(&srv.sessions);
                    sup.kill(&ss[i]); // a no-op if it ended meanwhile
                } else if i < ss.len() + cs.len() {
                    let reg = lock(&srv.channels);
                    if let Some(ch) = reg.get(&cs[i - ss.len()]) {
                        srv.kill_channel(ch);
                    }
                } else {
                    srv.kill_conn(&mut lock(&srv.conns), &ns[i - ss.len() - cs.len()]);
                }
                return;
            }
        }
        let n_s = if ks { lock(&srv.sessions).live.len() } else { 0 };
        let n_c = if kc { lock(&srv.channels).len() } else { 0 };
        let n_n = if kn { lock(&srv.conns).len() } else { 0 };
        if n_s + n_c + n_n == 0 {
            return;
        }
        // drawn over the counts just read: a registry that shrank meanwhile makes this
        // strike a miss, not a biased choice
        let i = self.rng.below(n_s + n_c + n_n);
        if i < n_s {
            let reg = lock(&srv.sessions);
            if let Some(s) = reg.live.get(i).cloned() {
                sup.kill(&s);
            }
        } else if i < n_s + n_c {
            let reg = lock(&srv.channels);
            if let Some(ch) = reg.values().nth(i - n_s) {
                srv.kill_channel(ch);
            }
        } else {
            let mut reg = lock(&srv.conns);
            if let Some(c) = reg.get(i - n_s - n_c).cloned() {
                srv.kill_conn(&mut reg, &c);
            }
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
