//! The open-loop schedule and the delivery ledger.
//!
//! Schedule: event k leaves at t_k; constant t_k = k / L, Poisson t_k = t_{k-1} + Exp(L)
//! (inverse transform of a uniform from a PCG stream seeded by --seed); its sender is a
//! uniform client from the same stream. Nothing about the server's answers changes it
//! (open loop).
//!
//! Ledger: every timed PRIVMSG carries its sender's sequence number; a receiver keeps, per
//! (sender, receiver) pair, a bit per sequence number seen. A second copy is a duplicate, a
//! copy older than the newest seen is reordered, and what is missing at the end is lost.
//! Latency (receive - scheduled) and schedule slip (send - scheduled) go to HdrHistograms
//! in nanoseconds.

use hdrhistogram::Histogram;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

pub struct Schedule {
    rng: Pcg64,
    rate_per_s: f64,
    poisson: bool,
    senders: usize,
    k: u64,
    t_s: f64,
}

impl Schedule {
    pub fn new(seed: u64, rate_per_s: f64, poisson: bool, senders: usize) -> Schedule {
        Schedule {
            rng: Pcg64::seed_from_u64(seed),
            rate_per_s,
            poisson,
            senders,
            k: 0,
            t_s: 0.0,
        }
    }

    fn uniform(&mut self) -> f64 {
        // 53 random bits -> [0, 1)
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next event: (scheduled seconds since the schedule's start, sender index).
    pub fn next_event(&mut self) -> (f64, usize) {
        let t = if self.poisson {
            self.t_s += -(1.0 - self.uniform()).ln() / self.rate_per_s;
            self.t_s
        } else {
            let t = self.k as f64 / self.rate_per_s;
            self.k += 1;
            t
        };
        let sender = ((self.uniform() * self.senders as f64) as usize).min(self.senders - 1);
        (t, sender)
    }
}

pub fn histogram() -> Histogram<u64> {
    // 1 ns .. 1 hour at 3 significant digits
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// What happened to one received copy.
#[derive(Debug, PartialEq)]
pub enum Seen {
    First,
    Reordered,
    Duplicate,
    /// a sequence number that sender never sent on this pair
    Unknown,
}

#[derive(Default)]
struct Pair {
    bits: Vec<u64>,
    newest: Option<u64>,
}

/// Per (sender, receiver) pair: slots_per_receiver pairs per receiver, the sender's slot
/// given by the caller (latency mode: 1 slot, the partner; fanout: one per channel member).
pub struct Ledger {
    slots: usize,
    pairs: Vec<Pair>,
    sent: Vec<u64>, // per sender: sequence numbers used
    /// the measured part's copies: expected (sent x recipients) and delivered
    pub expected: u64,
    pub delivered: u64,
    /// the warm-up's (scheduled before --warmup-s): checked, not timed
    pub warmup_expected: u64,
    pub warmup_delivered: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub unknown: u64,
    pub latency_ns: Histogram<u64>,
}

impl Ledger {
    pub fn new(clients: usize, slots_per_receiver: usize) -> Ledger {
        Ledger {
            slots: slots_per_receiver,
            pairs: (0..clients * slots_per_receiver).map(|_| Pair::default()).collect(),
            sent: vec![0; clients],
            expected: 0,
            delivered: 0,
            warmup_expected: 0,
            warmup_delivered: 0,
            duplicated: 0,
            reordered: 0,
            unknown: 0,
            latency_ns: histogram(),
        }
    }

    /// The sender's next sequence number; `recipients` copies are now expected (of the
    /// warm-up when `warmup`).
    pub fn next_seq(&mut self, sender: usize, recipients: u64, warmup: bool) -> u64 {
        let seq = self.sent[sender];
        self.sent[sender] += 1;
        if warmup {
            self.warmup_expected += recipients;
        } else {
            self.expected += recipients;
        }
        seq
    }

    /// Books one received copy of `seq` from sender (whose slot at the receiver is slot);
    /// `latency_ns` None: a warm-up copy (checked, not timed).
    pub fn receive(&mut self, sender: usize, receiver: usize, slot: usize, seq: u64, latency_ns: Option<u64>) -> Seen {
        if sender >= self.sent.len() || slot >= self.slots || seq >= self.sent[sender] {
            self.unknown += 1;
            return Seen::Unknown;
        }
        let pair = &mut self.pairs[receiver * self.slots + slot];
        let (word, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
        if pair.bits.len() <= word {
            pair.bits.resize(word + 1, 0);
        }
        if pair.bits[word] & bit != 0 {
            self.duplicated += 1;
            return Seen::Duplicate;
        }
        pair.bits[word] |= bit;
        match latency_ns {
            Some(ns) => {
                self.delivered += 1;
                self.latency_ns.saturating_record(ns.max(1));
            }
            None => self.warmup_delivered += 1,
        }
        match pair.newest {
            Some(n) if seq < n => {
                self.reordered += 1;
                Seen::Reordered
            }
            _ => {
                pair.newest = Some(seq);
                Seen::First
            }
        }
    }

    /// Copies never delivered, warm-up and measured part alike.
    pub fn lost(&self) -> u64 {
        self.expected + self.warmup_expected - self.delivered - self.warmup_delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_fixes_the_schedule_and_the_rate_holds() {
        let take = |seed, poisson| {
            let mut s = Schedule::new(seed, 1000.0, poisson, 10);
            (0..20_000).map(|_| s.next_event()).collect::<Vec<_>>()
        };
        assert_eq!(take(7, true), take(7, true));
        assert_ne!(take(7, true), take(8, true));
        let p = take(7, true);
        let rate = p.len() as f64 / p.last().unwrap().0;
        assert!((rate - 1000.0).abs() < 30.0, "poisson rate {rate}"); // 20,000 events: sd ~0.7 %
        assert!(p.windows(2).all(|w| w[1].0 >= w[0].0));
        let c = take(7, false);
        assert_eq!((c[0].0, c[1000].0), (0.0, 1.0));
        let mut used = [0usize; 10];
        c.iter().for_each(|&(_, s)| used[s] += 1);
        assert!(used.iter().all(|&n| (1700..2300).contains(&n)), "senders {used:?}");
    }

    #[test]
    fn copies_are_booked_first_reordered_duplicate_or_unknown() {
        let mut l = Ledger::new(4, 1);
        for _ in 0..3 {
            l.next_seq(0, 1, false);
        }
        assert_eq!(l.receive(0, 1, 0, 0, Some(5)), Seen::First);
        assert_eq!(l.receive(0, 1, 0, 2, Some(5)), Seen::First);
        assert_eq!(l.receive(0, 1, 0, 1, Some(5)), Seen::Reordered);
        assert_eq!(l.receive(0, 1, 0, 2, Some(5)), Seen::Duplicate);
        assert_eq!(l.receive(0, 1, 0, 3, Some(5)), Seen::Unknown); // never sent
        assert_eq!(
            (l.delivered, l.duplicated, l.reordered, l.unknown, l.lost()),
            (3, 1, 1, 1, 0)
        );
        l.next_seq(0, 1, false);
        assert_eq!(l.lost(), 1);
    }

    #[test]
    fn warmup_copies_are_checked_but_not_timed() {
        let mut l = Ledger::new(2, 1);
        l.next_seq(0, 1, true); // warm-up: seq 0
        l.next_seq(0, 1, true); // warm-up: seq 1, never delivered
        l.next_seq(0, 1, false); // measured: seq 2
        assert_eq!(l.receive(0, 1, 0, 0, None), Seen::First);
        assert_eq!(l.receive(0, 1, 0, 0, None), Seen::Duplicate);
        assert_eq!(l.receive(0, 1, 0, 2, Some(7)), Seen::First);
        assert_eq!((l.warmup_expected, l.warmup_delivered), (2, 1));
        assert_eq!((l.expected, l.delivered), (1, 1));
        assert_eq!(l.latency_ns.len(), 1, "only the measured copy is timed");
        assert_eq!((l.duplicated, l.lost()), (1, 1), "the lost warm-up copy counts as lost");
    }

    #[test]
    fn fanout_pairs_are_kept_apart() {
        let mut l = Ledger::new(3, 3); // one channel of 3
        l.next_seq(0, 2, false);
        assert_eq!(l.receive(0, 1, 0, 0, Some(10)), Seen::First);
        assert_eq!(l.receive(0, 2, 0, 0, Some(10)), Seen::First);
        assert_eq!(l.receive(0, 2, 0, 0, Some(10)), Seen::Duplicate);
        assert_eq!((l.expected, l.delivered, l.lost()), (2, 2, 0));
        assert_eq!(l.latency_ns.len(), 2);
    }
}
