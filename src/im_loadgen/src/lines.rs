//! What each received line does: PING is answered, 001 completes a registration (an error
//! numeric or ERROR before it refuses one), a client's own JOIN echo completes its join,
//! and a timed PRIVMSG is booked in the ledger against its (sender, receiver) pair with its
//! latency (receive time - scheduled time).

use crate::conn::State;
use crate::irc;
use crate::os;
use crate::setup::{Mode, Setup};
use crate::track::Ledger;

/// A client's view of one line (what the line handler tells the connection to do).
#[derive(Default)]
pub struct Effects {
    pub welcome: bool,
    pub refused: bool,
    pub joined: bool,
    pub replies: Vec<u8>,
}

/// The numerics that refuse a registration (RFC 2812: no, erroneous, taken or colliding
/// nick, unavailable resource, USER's parameters, already registered, password, banned).
/// Any other error numeric (a 422 for a missing MOTD, say) is counted, not a refusal.
const REFUSALS: [u16; 10] = [431, 432, 433, 436, 437, 461, 462, 463, 464, 465];

/// The generator's state apart from its sockets: counts, clocks and the ledger.
pub struct Ctx {
    pub setup: Setup,
    pub connected: usize,
    pub registered: usize,
    pub failed: usize,
    pub in_flight: usize,
    pub next_to_connect: usize,
    /// clients whose connection the server closed before their 001, to connect again
    /// (setup only: reconnect)
    pub to_reconnect: Vec<usize>,
    /// the reconnects so far
    pub setup_reconnects: u64,
    pub first_connect_ns: Option<u64>,
    pub last_welcome_ns: u64,
    pub joined: usize,
    pub pings: u64,
    pub error_numerics: u64,
    pub server_disconnects: u64,
    pub t0_ns: u64,
    /// the warm-up's length: copies scheduled before it are not timed
    pub warmup_ns: u64,
    pub ledger: Ledger,
    /// idle mode: the client that sent MEMORY after the hold, and whether its answer came
    /// (the server's NOTICE with live_bytes, or a daemon's 421: it has no such command)
    pub memory_from: Option<usize>,
    pub memory_answered: bool,
}

impl Ctx {
    /// Nothing counted yet; a ledger slot per pair (one per client, or per channel member).
    pub fn new(setup: Setup) -> Ctx {
        let slots = if setup.mode == Mode::Fanout {
            setup.channel_size
        } else {
            1
        };
        let ledger = Ledger::new(setup.clients, slots);
        Ctx {
            setup,
            connected: 0,
            registered: 0,
            failed: 0,
            in_flight: 0,
            next_to_connect: 0,
            to_reconnect: Vec::new(),
            setup_reconnects: 0,
            first_connect_ns: None,
            last_welcome_ns: 0,
            joined: 0,
            pings: 0,
            error_numerics: 0,
            server_disconnects: 0,
            t0_ns: 0,
            warmup_ns: 0,
            ledger,
            memory_from: None,
            memory_answered: false,
        }
    }

    pub fn on_line(&mut self, receiver: usize, state: State, line: &[u8], fx: &mut Effects) {
        let Some(l) = irc::parse(line) else { return };
        // a 001 earlier in the same read has registered the client already
        let registering = state == State::Registering && !fx.welcome;
        if self.memory_from == Some(receiver) && is_memory_answer(&l) {
            self.memory_answered = true;
            return;
        }
        match l.command {
            b"PRIVMSG" => self.on_message(receiver, &l),
            b"PING" => {
                self.pings += 1;
                fx.replies.extend_from_slice(b"PONG :");
                fx.replies.extend_from_slice(l.last.unwrap_or(b""));
                fx.replies.extend_from_slice(b"\r\n");
            }
            b"JOIN" if l.nick.and_then(irc::nick_index) == Some(receiver) => fx.joined = true,
            b"ERROR" if registering => fx.refused = true,
            _ => match l.numeric() {
                Some(1) if registering => fx.welcome = true,
                Some(n) if registering && REFUSALS.contains(&n) => fx.refused = true,
                Some(400..=599) => self.error_numerics += 1,
                _ => {}
            },
        }
    }

    fn on_message(&mut self, receiver: usize, l: &irc::Line) {
        let now = os::now_ns();
        let (Some(sender), Some((seq, at))) = (l.nick.and_then(irc::nick_index), l.last.and_then(irc::read_timed))
        else {
            self.ledger.unknown += 1;
            return;
        };
        let k = self.setup.channel_size;
        let slot = match self.setup.mode {
            Mode::Fanout if sender / k == receiver / k && sender != receiver => sender % k,
            Mode::Latency if sender == receiver ^ 1 => 0,
            _ => usize::MAX, // not a pair of this run: booked as unknown
        };
        // a warm-up copy (scheduled before --warmup-s) is checked, not timed
        let latency = (at >= self.warmup_ns).then(|| now.saturating_sub(self.t0_ns + at));
        self.ledger.receive(sender, receiver, slot, seq, latency);
    }
}

/// The answer to MEMORY: our servers' `NOTICE <nick> :live_bytes <N>`, or 421 (unknown
/// command) from a server without it, which is not an error of the run.
fn is_memory_answer(l: &irc::Line) -> bool {
    match l.command {
        b"NOTICE" => l.last.is_some_and(|t| t.starts_with(b"live_bytes ")),
        _ => l.numeric() == Some(421) && l.last.is_some() && l.first.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::new(Setup {
            mode: Mode::Latency,
            clients: 2,
            rate_per_s: 1.0,
            poisson: true,
            warmup_s: 0.0,
            duration_s: 1.0,
            drain_s: 1.0,
            seed: 1,
            channel_size: 2,
            payload_bytes: 64,
            timeout_s: 1.0,
            port: 1,
            login_concurrency: 1,
            ks_gaps: 10,
        })
    }

    fn feed(c: &mut Ctx, state: State, lines: &[&str]) -> Effects {
        let mut fx = Effects::default();
        lines.iter().for_each(|l| c.on_line(0, state, l.as_bytes(), &mut fx));
        fx
    }

    #[test]
    fn a_welcome_registers_and_later_numerics_in_the_same_read_do_not_refuse() {
        let mut c = ctx();
        let fx = feed(
            &mut c,
            State::Registering,
            &[":s 001 c0 :Welcome", ":s 422 c0 :MOTD File is missing"],
        );
        assert!(fx.welcome && !fx.refused);
        assert_eq!(c.error_numerics, 1);
        let fx = feed(&mut c, State::Registering, &[":s 433 * c0 :Nickname already in use"]);
        assert!(fx.refused && !fx.welcome);
        let fx = feed(&mut c, State::Registered, &["PING :tok", ":s 401 c0 c9 :No such nick"]);
        assert_eq!(
            (fx.replies.as_slice(), c.pings, c.error_numerics),
            (&b"PONG :tok\r\n"[..], 1, 2)
        );
    }

    #[test]
    fn the_memory_answer_is_seen_on_the_asking_client_and_a_421_is_no_error() {
        let mut c = ctx();
        feed(&mut c, State::Registered, &[":s NOTICE c0 :live_bytes 123"]);
        assert!(!c.memory_answered); // nobody asked
        c.memory_from = Some(0);
        feed(&mut c, State::Registered, &[":s NOTICE c0 :something else"]);
        assert!(!c.memory_answered);
        feed(&mut c, State::Registered, &[":s NOTICE c0 :live_bytes 123"]);
        assert!(c.memory_answered);
        let mut d = ctx();
        d.memory_from = Some(0);
        feed(&mut d, State::Registered, &[":s 421 c0 MEMORY :Unknown command"]);
        assert!(d.memory_answered);
        assert_eq!(d.error_numerics, 0);
    }

    #[test]
    fn a_timed_message_from_the_partner_is_booked_and_others_are_not() {
        let mut c = ctx();
        c.ledger.next_seq(1, 1, false);
        feed(
            &mut c,
            State::Registered,
            &[":c1!u@h PRIVMSG c0 :0 5 xx", ":c1!u@h PRIVMSG c0 :hello"],
        );
        assert_eq!((c.ledger.delivered, c.ledger.unknown), (1, 1));
        feed(&mut c, State::Registered, &[":c3!u@h PRIVMSG c0 :0 5 xx"]); // not c0's partner
        assert_eq!((c.ledger.delivered, c.ledger.unknown), (1, 2));
    }

    #[test]
    fn a_copy_scheduled_in_the_warmup_is_booked_untimed() {
        let mut c = ctx();
        c.warmup_ns = 1_000;
        c.ledger.next_seq(1, 1, true); // seq 0, scheduled at 5 ns: warm-up
        c.ledger.next_seq(1, 1, false); // seq 1, scheduled at 2000 ns: measured
        feed(
            &mut c,
            State::Registered,
            &[":c1!u@h PRIVMSG c0 :0 5 xx", ":c1!u@h PRIVMSG c0 :1 2000 xx"],
        );
        assert_eq!((c.ledger.warmup_delivered, c.ledger.delivered), (1, 1));
        assert_eq!(c.ledger.latency_ns.len(), 1);
        assert_eq!(c.ledger.lost(), 0);
    }
}
