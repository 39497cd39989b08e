//! The open-loop schedule's sends. The poll waits until the next scheduled send (os::wait,
//! to the nanosecond); then every send due by now is built in its connection's buffer, and
//! each connection that got one is written once (the due messages of one client go out in
//! one write; different clients' cannot). Each send's slip (written - scheduled) is booked
//! after its write. When the generator is late, due sends go out in bursts that yield to
//! the poll every BURST sends, so that reading never stops while it catches up.

use crate::irc;
use crate::os;
use crate::run::Gen;
use crate::setup::Mode;
use crate::track::{Schedule, histogram};
use hdrhistogram::Histogram;

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
        let targets = self.targets();
        // the burst's written-to clients and its measured sends' scheduled times
        let (mut touched, mut measured) = (Vec::with_capacity(BURST), Vec::with_capacity(BURST));
        'schedule: while at(next) < end {
            let mut burst = 0;
            let mut now = os::now_ns();
            while at(next) <= now && now < end + grace_ns {
                let (i, at_ns, w) = (next.1, at(next), warm(next));
                if w {
                    out.warmup_scheduled += 1;
                } else {
                    if out.measured_from.is_none() {
                        let (u, s) = os::cpu_s();
                        out.measured_from = Some((now, u + s));
                    }
                    out.scheduled += 1;
                }
                let queued = self.queue_one(i, &targets, at_ns - t0, w);
                if queued {
                    touched.push(i);
                }
                if w {
                    out.warmup_sent += u64::from(queued);
                } else {
                    // an unconnected client's event is scheduled, not sent, and its slip booked
                    out.sent += u64::from(queued);
                    measured.push(at_ns);
                }
                next = schedule.next_event();
                burst += 1;
                if burst == BURST || at(next) >= end {
                    break;
                }
                if at(next) > now {
                    now = os::now_ns();
                }
            }
            for &i in &touched {
                if self.conns[i].as_mut().is_some_and(|c| c.flush().is_err()) {
                    self.close(i, true);
                }
            }
            let written = os::now_ns();
            for &a in &measured {
                out.slip.saturating_record((written - a).max(1));
            }
            touched.clear();
            measured.clear();
            if at(next) >= end || now >= end + grace_ns {
                break 'schedule;
            }
            // a full burst yields to the poll without waiting; else wait for the next send
            let deadline = if burst == BURST { written } else { at(next) };
            self.turn(Some(deadline));
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

    /// Each client's target: its partner's nick, or its channel (fanout).
    fn targets(&self) -> Vec<String> {
        let s = &self.ctx.setup;
        (0..s.clients)
            .map(|i| match s.mode {
                Mode::Fanout => irc::channel(i / s.channel_size),
                _ => irc::nick(i ^ 1),
            })
            .collect()
    }

    /// Queues one timed PRIVMSG from client i (to its partner, or its channel) in its
    /// connection's buffer, written by the caller; false when client i is not connected
    /// (the message is then scheduled but not sent).
    fn queue_one(&mut self, i: usize, targets: &[String], at_ns: u64, warmup: bool) -> bool {
        let s = &self.ctx.setup;
        let recipients = match s.mode {
            Mode::Fanout => s.channel_size as u64 - 1,
            _ => 1,
        };
        let payload = s.payload_bytes;
        let Some(conn) = self.conns[i].as_mut() else {
            return false;
        };
        let seq = self.ctx.ledger.next_seq(i, recipients, warmup);
        conn.queue_with(|buf| irc::write_timed(buf, &targets[i], seq, at_ns, payload));
        true
    }
}
