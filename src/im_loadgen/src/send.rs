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

/// What the schedule did: counts of the measured part and of the warm-up, the measured
/// part's slip, and when (monotonic ns, the generator's CPU seconds) the measured part began.
pub struct Sent {
    pub scheduled: u64,
    pub sent: u64,
    pub warmup_scheduled: u64,
    pub warmup_sent: u64,
    pub slip: Histogram<u64>,
    pub measured_from: Option<(u64, f64)>,
}

impl Gen {
    /// Sends the open-loop schedule: warmup_ns of warm-up, then duration_ns measured.
    /// A late generator goes on sending the events due before the end until the end plus
    /// the drain time (grace_ns); those still unsent then are scheduled but never sent, and
    /// their slip is booked as at least (that cut-off - scheduled time). A warm-up event's
    /// slip is not booked.
    pub(crate) fn send_schedule(&mut self, warmup_ns: u64, duration_ns: u64, grace_ns: u64) -> Sent {
        let s = &self.ctx.setup;
        let senders = s.clients;
        let mut schedule = Schedule::new(s.seed, s.rate_per_s, s.poisson, senders);
        let mut out = Sent {
            scheduled: 0,
            sent: 0,
            warmup_scheduled: 0,
            warmup_sent: 0,
            slip: histogram(),
            measured_from: None,
        };
        let t0 = os::now_ns() + 1_000_000; // a millisecond's lead for the first send
        self.ctx.t0_ns = t0;
        self.ctx.warmup_ns = warmup_ns;
        let end = t0 + warmup_ns + duration_ns;
        let mut next = schedule.next_event();
        let at = |e: (f64, usize)| t0 + (e.0 * 1e9) as u64;
        let warm = |e: (f64, usize)| at(e) < t0 + warmup_ns;
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
                if warm(next) {
                    out.warmup_scheduled += 1;
                    out.warmup_sent += u64::from(self.send_one(next.1, at(next) - t0, true));
                } else {
                    if out.measured_from.is_none() {
                        let (u, s) = os::cpu_s();
                        out.measured_from = Some((now, u + s));
                    }
                    out.scheduled += 1;
                    out.sent += u64::from(self.send_one(next.1, at(next) - t0, false));
                    out.slip.saturating_record((os::now_ns() - at(next)).max(1));
                }
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
            if warm(next) {
                out.warmup_scheduled += 1;
            } else {
                out.scheduled += 1;
                out.slip.saturating_record((stop - at(next)).max(1));
            }
            next = schedule.next_event();
        }
        out
    }

    /// Sends one timed PRIVMSG from client i (to its partner, or its channel); false when
    /// client i is not connected (the message is then scheduled but not sent).
    fn send_one(&mut self, i: usize, at_ns: u64, warmup: bool) -> bool {
        let s = &self.ctx.setup;
        let (target, recipients) = match s.mode {
            Mode::Fanout => (irc::channel(i / s.channel_size), s.channel_size as u64 - 1),
            _ => (irc::nick(i ^ 1), 1),
        };
        let payload = s.payload_bytes;
        let Some(conn) = self.conns[i].as_mut() else {
            return false;
        };
        let seq = self.ctx.ledger.next_seq(i, recipients, warmup);
        if conn
            .send_with(|buf| irc::write_timed(buf, &target, seq, at_ns, payload))
            .is_err()
        {
            self.close(i, true);
        }
        true
    }
}
