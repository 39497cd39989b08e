//! What each received line does: PING is answered, 001 completes a registration (an error
//! numeric or ERROR before it refuses one), a client's own JOIN echo completes its join,
//! and a timed PRIVMSG is booked in the ledger against its (sender, receiver) pair with its
//! latency (receive time - scheduled time).

use crate::conn::State;
use crate::irc;
use crate::os;
use crate::run::{Mode, Setup};
use crate::track::Ledger;

/// A client's view of one line (what the line handler tells the connection to do).
#[derive(Default)]
pub struct Effects {
    pub welcome: bool,
    pub refused: bool,
    pub joined: bool,
    pub replies: Vec<u8>,
}

/// The generator's state apart from its sockets: counts, clocks and the ledger.
pub struct Ctx {
    pub setup: Setup,
    pub connected: usize,
    pub registered: usize,
    pub failed: usize,
    pub in_flight: usize,
    pub next_to_connect: usize,
    pub first_connect_ns: Option<u64>,
    pub last_welcome_ns: u64,
    pub joined: usize,
    pub pings: u64,
    pub error_numerics: u64,
    pub server_disconnects: u64,
    pub t0_ns: u64,
    pub ledger: Ledger,
}

impl Ctx {
    pub fn on_line(&mut self, receiver: usize, state: State, line: &[u8], fx: &mut Effects) {
        let Some(l) = irc::parse(line) else { return };
        match l.command {
            b"PRIVMSG" => self.on_message(receiver, &l),
            b"PING" => {
                self.pings += 1;
                fx.replies.extend_from_slice(b"PONG :");
                fx.replies.extend_from_slice(l.last.unwrap_or(b""));
                fx.replies.extend_from_slice(b"\r\n");
            }
            b"JOIN" if l.nick.and_then(irc::nick_index) == Some(receiver) => fx.joined = true,
            b"ERROR" if state != State::Registered => fx.refused = true,
            _ => match l.numeric() {
                Some(1) if state == State::Registering => fx.welcome = true,
                Some(400..=599) if state == State::Registering => fx.refused = true,
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
        self.ledger
            .receive(sender, receiver, slot, seq, now.saturating_sub(self.t0_ns + at));
    }
}
