//! The generator's loop clock (docs/im.md, "Validity"). The generator busy-polls (a poll
//! with a 0 timeout, over and over: its CPU is its own), so its CPU share is always about 1
//! and says nothing; what shows a saturated or starved generator is how much of its loop
//! time was work, and how late it read.
//!
//! Iteration k runs from the start of poll k (s_k) to the start of poll k+1. It is busy when
//! its poll returned an event or a scheduled send was due in it, else an idle spin; the busy
//! share of a window = busy time / loop time.
//!
//! Read lateness of iteration k = s_{k+1} - s_{k-1}. Every byte read in iteration k arrived
//! after poll k-1 collected its events (edge-triggered: else poll k-1 had reported it), which
//! is after s_{k-1}, and was read before poll k+1 began, so none waited longer between its
//! arrival and its read. It is not measured from poll k-1's return: a thread that loses its
//! CPU does so mostly on the way back from a system call, after the events were collected and
//! before the return is timed, so a bound from the return misses exactly the starvation it is
//! there to see. It is booked once per readable socket handled, so its p99 is over reads as
//! the slip's is over sends. A poll that filled its event array may have left older readiness
//! behind, so its start is not used as a later bound (the older one is kept).

use crate::track::histogram;
use hdrhistogram::Histogram;

pub struct Pace {
    poll_start: u64,
    /// s_{k-1}: what the current iteration's lateness is measured from
    since: u64,
    /// the start of the last poll that returned (s_k once poll k has returned)
    last_start: u64,
    last_full: bool,
    reads: u64,
    busy: bool,
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// read lateness, booked only while `measuring` (the measured window and the drain)
    pub lateness_ns: Histogram<u64>,
    pub measuring: bool,
}

impl Pace {
    pub fn new(now: u64) -> Pace {
        Pace {
            poll_start: now,
            since: now,
            last_start: now,
            last_full: false,
            reads: 0,
            busy: false,
            busy_ns: 0,
            idle_ns: 0,
            lateness_ns: histogram(),
            measuring: false,
        }
    }

    /// At the start of a poll (now = s_{k+1}): closes the iteration that ends here.
    pub fn before_poll(&mut self, now: u64) {
        let span = now.saturating_sub(self.poll_start);
        if self.busy {
            self.busy_ns += span;
        } else {
            self.idle_ns += span;
        }
        if self.reads > 0 && self.measuring {
            let late = now.saturating_sub(self.since).max(1);
            self.lateness_ns.saturating_record_n(late, self.reads);
        }
        self.poll_start = now;
    }

    /// At a poll's return: `events` ready sockets, `reads` of them readable, `full` when the
    /// event array was filled.
    pub fn after_poll(&mut self, events: usize, reads: u64, full: bool) {
        if !self.last_full {
            self.since = self.last_start;
        }
        self.last_start = self.poll_start;
        self.last_full = full;
        self.reads = reads;
        self.busy = events > 0;
    }

    /// The current iteration did work of its own (a scheduled send was due).
    pub fn work(&mut self) {
        self.busy = true;
    }

    /// (busy, loop) nanoseconds so far: a window's share is the ratio of two marks' differences.
    pub fn mark(&self) -> (u64, u64) {
        (self.busy_ns, self.busy_ns + self.idle_ns)
    }
}

/// The busy share between two marks (0 for an empty window).
pub fn share(from: (u64, u64), to: (u64, u64)) -> f64 {
    let (busy, all) = (to.0 - from.0, to.1 - from.1);
    if all == 0 { 0.0 } else { busy as f64 / all as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_runs_from_the_start_of_the_poll_before_last_to_the_next_poll() {
        let mut p = Pace::new(0);
        p.measuring = true;
        p.before_poll(10);
        p.after_poll(0, 0, false); // idle spin 0..10
        p.before_poll(20);
        p.after_poll(2, 2, false); // 2 reads in iteration 2 (10..20 was idle)
        p.before_poll(50); // both may have arrived just after poll 1 (s = 10) collected: 40 ns
        assert_eq!((p.lateness_ns.len(), p.lateness_ns.max()), (2, 40));
        assert_eq!((p.busy_ns, p.idle_ns), (30, 20));
        p.after_poll(1024, 1, true); // a full array: its start (50) is not a bound later
        p.before_poll(60);
        p.after_poll(1, 1, false);
        p.before_poll(70); // since stays at 20 (the poll before the full one)
        assert_eq!(p.lateness_ns.max(), 50);
        assert!((share((0, 0), p.mark()) - 50.0 / 70.0).abs() < 1e-9);
    }

    /// The positive control: a thread preempted on its way back from an empty poll (the
    /// scheduler's usual point) and back 5 ms later finds reads that came in meanwhile; the
    /// 5 ms are in their lateness (measured from the poll's return they were not: CI once
    /// saw a starved generator's lateness max at 0.5 ms).
    #[test]
    fn a_thread_preempted_after_an_empty_poll_reads_late() {
        let mut p = Pace::new(0);
        p.measuring = true;
        p.before_poll(1_000);
        p.after_poll(0, 0, false); // collected nothing at ~1 us; preempted before returning
        p.before_poll(5_002_000); // back 5 ms later
        p.after_poll(3, 3, false);
        p.before_poll(5_003_000);
        assert!(p.lateness_ns.min() >= 5_000_000, "{}", p.lateness_ns.min());
    }
}
