//! The open-loop schedule's sends. The loop spins on a poll that does not wait, and at each
//! turn every send due by now is built in its connection's buffer; each connection that got
//! one is then written once (the due messages of one client go out in one write; different
//! clients' cannot). Each send's slip (its connection's write's return - scheduled) is
//! booked after that write; the time its write began goes to the inter-send gaps' sample
//! (stats.rs): when the generator let it go (a loopback write's own microseconds include
//! the server's side of the delivery). When the generator is late, due sends go out in bursts that yield to the
//! poll every BURST sends, so that reading never stops while it catches up.

use crate::irc;
use crate::os;
use crate::run::Gen;
use crate::setup::Mode;
use crate::stats::GapSample;
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
    /// (monotonic ns, CPU seconds, the loop clock's mark) at the first measured send
    pub measured_from: Option<(u64, f64, (u64, u64))>,
    pub gaps: GapSample,
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
            gaps: GapSample::new(s.rate_per_s * s.duration_s, s.ks_gaps),
        };
        // each client's last write's (start, return) in ns: its messages' send time and slip
        let mut written_at = vec![(0u64, 0u64); senders];
        let mut in_burst = vec![false; senders];
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
        let mut send_times = Vec::with_capacity(BURST);
        'schedule: while at(next) < end {
            let mut burst = 0;
            let mut now = os::now_ns();
            while at(next) <= now && now < end + grace_ns {
                let (i, at_ns, w) = (next.1, at(next), warm(next));
                self.pace.work();
                if w {
                    out.warmup_scheduled += 1;
                } else {
                    if out.measured_from.is_none() {
                        let (u, s) = os::cpu_s();
                        out.measured_from = Some((now, u + s, self.pace.mark()));
                        self.pace.measuring = true;
                    }
                    out.scheduled += 1;
                }
                let queued = self.queue_one(i, &targets, at_ns - t0, w);
                if queued && !in_burst[i] {
                    in_burst[i] = true;
                    touched.push(i);
                }
                if w {
                    out.warmup_sent += u64::from(queued);
                } else {
                    // an unconnected client's event is scheduled, not sent, and its slip booked
                    out.sent += u64::from(queued);
                    measured.push((i, queued, at_ns));
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
                let begun = os::now_ns();
                if self.conns[i].as_mut().is_some_and(|c| c.flush().is_err()) {
                    self.close(i, true);
                }
                written_at[i] = (begun, os::now_ns());
                in_burst[i] = false;
            }
            let written = os::now_ns();
            for &(i, queued, a) in &measured {
                // an unconnected client's event: no write, its slip is the burst's end
                let (begun, t) = if queued { written_at[i] } else { (written, written) };
                out.slip.saturating_record(t.saturating_sub(a).max(1));
                if queued {
                    send_times.push(begun);
                }
            }
            // the burst's writes in time order (one client's several messages share one)
            send_times.sort_unstable();
            send_times.iter().for_each(|&t| out.gaps.push(t));
            send_times.clear();
            touched.clear();
            measured.clear();
            if at(next) >= end || now >= end + grace_ns {
                break 'schedule;
            }
            self.turn();
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
