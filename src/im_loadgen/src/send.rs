//! The open-loop schedule's sends. Each send is timed by the timerfd armed at its
//! scheduled time (epoll's own timeout counts whole milliseconds); when the generator is
//! late, due sends go out in bursts that yield to the poll every BURST sends, so that
//! reading never stops while it catches up.

use crate::irc;
use crate::os;
use crate::run::Gen;
use crate::setup::Mode;
use crate::track::{Schedule, histogram};
use hdrhistogram::Histogram;
use std::time::Duration;

const BURST: usize = 256;

impl Gen {
    /// Sends the open-loop schedule for duration_ns: (events scheduled, sent, slip histogram).
    /// A late generator goes on sending the events due before the end until the end plus
    /// the drain time (grace_ns); those still unsent then are scheduled but never sent, and
    /// their slip is booked as at least (that cut-off - scheduled time).
    pub(crate) fn send_schedule(&mut self, duration_ns: u64, grace_ns: u64) -> (u64, u64, Histogram<u64>) {
        let s = &self.ctx.setup;
        let senders = s.clients;
        let mut schedule = Schedule::new(s.seed, s.rate_per_s, s.poisson, senders);
        let mut slip = histogram();
        let t0 = os::now_ns() + 1_000_000; // a millisecond's lead for the first send
        self.ctx.t0_ns = t0;
        let end = t0 + duration_ns;
        let (mut scheduled, mut sent) = (0u64, 0u64);
        let mut next = schedule.next_event();
        let at = |e: (f64, usize)| t0 + (e.0 * 1e9) as u64;
        'schedule: while at(next) < end {
            let mut burst = 0;
            loop {
                let now = os::now_ns();
                if at(next) > now {
                    break;
                }
                if now >= end + grace_ns {
                    break 'schedule;
                }
                scheduled += 1;
                if self.send_one(next.1, at(next) - t0) {
                    sent += 1;
                }
                slip.saturating_record((os::now_ns() - at(next)).max(1));
                next = schedule.next_event();
                burst += 1;
                if burst == BURST || at(next) >= end {
                    break;
                }
            }
            if at(next) >= end {
                break;
            }
            if burst == BURST {
                self.turn(Some(Duration::ZERO));
            } else {
                self.timer.arm_at(at(next));
                self.turn(None);
            }
        }
        let stop = os::now_ns().max(end + grace_ns);
        while at(next) < end {
            scheduled += 1;
            slip.saturating_record((stop - at(next)).max(1));
            next = schedule.next_event();
        }
        (scheduled, sent, slip)
    }

    /// Sends one timed PRIVMSG from client i (to its partner, or its channel); false when
    /// client i is not connected (the message is then scheduled but not sent).
    fn send_one(&mut self, i: usize, at_ns: u64) -> bool {
        let s = &self.ctx.setup;
        let (target, recipients) = match s.mode {
            Mode::Fanout => (irc::channel(i / s.channel_size), s.channel_size as u64 - 1),
            _ => (irc::nick(i ^ 1), 1),
        };
        let payload = s.payload_bytes;
        let Some(conn) = self.conns[i].as_mut() else {
            return false;
        };
        let seq = self.ctx.ledger.next_seq(i, recipients);
        if conn
            .send_with(|buf| irc::write_timed(buf, &target, seq, at_ns, payload))
            .is_err()
        {
            self.close(i, true);
        }
        true
    }
}
