//! Two checks a run makes on itself (docs/im.md, "Validity").
//!
//! - Its inter-send gaps against the schedule's law, as Lancet does (Kogias et al., ATC
//!   2019): a Kolmogorov-Smirnov statistic of a fixed-size, evenly strided subsample of the
//!   achieved gaps (consecutive write times) against Exp(rate), for a poisson schedule.
//! - The p99 latency's 95 % interval from order statistics: with n latencies, the number
//!   below the true p99 is Binomial(n, 0.99), so [x_(l), x_(u)] covers it with probability
//!   P(l <= B <= u - 1); l and u are the tightest ranks keeping each tail at or below
//!   2.5 %. It exists only when n is large enough for both ranks to be samples (n >= 368).

use hdrhistogram::Histogram;

/// Fewer gaps than this: no statistic (a short run).
pub const KS_MIN_GAPS: usize = 50;

/// Takes every `stride`-th gap between consecutive send times, up to `keep`.
pub struct GapSample {
    stride: u64,
    keep: usize,
    seen: u64,
    last: Option<u64>,
    pub gaps_ns: Vec<u64>,
}

impl GapSample {
    /// `expected`: how many sends the measured part should have (spreads the sample over it).
    pub fn new(expected: f64, keep: usize) -> GapSample {
        let stride = (expected / keep as f64).floor().max(1.0) as u64;
        GapSample {
            stride,
            keep,
            seen: 0,
            last: None,
            gaps_ns: Vec::with_capacity(keep),
        }
    }

    /// One more send time (non-decreasing).
    pub fn push(&mut self, t_ns: u64) {
        if let Some(prev) = self.last.replace(t_ns) {
            if self.seen % self.stride == 0 && self.gaps_ns.len() < self.keep {
                self.gaps_ns.push(t_ns.saturating_sub(prev));
            }
            self.seen += 1;
        }
    }
}

/// The KS result: (D, n, critical value at level alpha), or None with too few gaps.
pub fn ks_exponential(gaps_ns: &[u64], rate_per_s: f64, alpha: f64) -> Option<(f64, usize, f64)> {
    let n = gaps_ns.len();
    if n < KS_MIN_GAPS {
        return None;
    }
    let mut x: Vec<f64> = gaps_ns.iter().map(|&g| g as f64 * 1e-9).collect();
    x.sort_by(f64::total_cmp);
    let nf = n as f64;
    let d = x.iter().enumerate().fold(0.0f64, |d, (i, &v)| {
        let f = 1.0 - (-rate_per_s * v).exp();
        d.max((i + 1) as f64 / nf - f).max(f - i as f64 / nf)
    });
    // Stephens' finite-n form of the asymptotic critical value sqrt(-ln(alpha/2) / 2)
    let c = (-(alpha / 2.0).ln() / 2.0).sqrt();
    Some((d, n, c / (nf.sqrt() + 0.12 + 0.11 / nf.sqrt())))
}

unsafe extern "C" {
    // the C library's log-gamma (libm, which Rust's std links on Linux)
    fn lgamma(x: f64) -> f64;
}

fn ln_binom_pmf(n: u64, k: u64, p: f64) -> f64 {
    // ln C(n, k) + k ln p + (n - k) ln(1 - p)
    // SAFETY: lgamma is a pure function of a finite argument.
    let lg = |x: f64| unsafe { lgamma(x) };
    let (nf, kf) = (n as f64, k as f64);
    lg(nf + 1.0) - lg(kf + 1.0) - lg(nf - kf + 1.0) + kf * p.ln() + (nf - kf) * (1.0 - p).ln()
}

/// The 1-based ranks (l, u) of the quantile q's interval at `level` among n samples, or None
/// when n is too small for both to be samples.
pub fn quantile_ranks(n: u64, q: f64, level: f64) -> Option<(u64, u64)> {
    if n == 0 {
        return None;
    }
    let tail = (1.0 - level) / 2.0;
    // F(j) = P(B <= j), B ~ Binomial(n, q); l = the largest j with F(j - 1) <= tail,
    // u = the smallest j with F(j - 1) >= 1 - tail
    // below 12 standard deviations under the mean the mass is < 1e-30: start there
    let sd = (n as f64 * q * (1.0 - q)).sqrt();
    let from = (n as f64 * q - 12.0 * sd).floor().max(0.0) as u64;
    let (mut cdf, mut l, mut u) = (0.0f64, None, None);
    for j in from..=n {
        // here cdf = F(j - 1)
        if cdf <= tail {
            l = Some(j);
        }
        if cdf >= 1.0 - tail {
            u = Some(j);
            break;
        }
        cdf += ln_binom_pmf(n, j, q).exp();
    }
    match (l, u) {
        (Some(l), Some(u)) if l >= 1 && u <= n => Some((l, u)),
        _ => None,
    }
}

/// The smallest n whose p99 has a 95 % interval (quantile_ranks is Some).
pub fn min_samples(q: f64, level: f64) -> u64 {
    (1..100_000)
        .find(|&n| quantile_ranks(n, q, level).is_some())
        .unwrap_or(u64::MAX)
}

/// The value of the k-th smallest (1-based) recorded sample of h.
pub fn nth_value(h: &Histogram<u64>, k: u64) -> u64 {
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_since_last_iteration();
        if seen >= k {
            return h.highest_equivalent(v.value_iterated_to());
        }
    }
    h.max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p99_interval_needs_368_samples_and_brackets_the_rank() {
        assert_eq!(min_samples(0.99, 0.95), 368); // 0.99^367 = 0.02501 > 0.025
        assert_eq!(quantile_ranks(367, 0.99, 0.95), None);
        let (l, u) = quantile_ranks(10_000, 0.99, 0.95).unwrap();
        // normal approximation: 9900 -/+ 1.96 sqrt(99) = 9880.5 .. 9919.5
        assert!((9878..=9882).contains(&l) && (9918..=9922).contains(&u), "{l} {u}");
        let mut h = crate::track::histogram();
        (1..=1000u64).for_each(|v| h.record(v).unwrap());
        assert_eq!(
            (nth_value(&h, 1), nth_value(&h, 500), nth_value(&h, 1000)),
            (1, 500, 1000)
        );
    }

    #[test]
    fn ks_accepts_exponential_gaps_and_rejects_regular_ones() {
        let mut s = crate::track::Schedule::new(3, 1000.0, true, 1);
        let times: Vec<u64> = (0..5000).map(|_| (s.next_event().0 * 1e9) as u64).collect();
        let mut g = GapSample::new(5000.0, 1000);
        times.iter().for_each(|&t| g.push(t));
        assert_eq!(g.gaps_ns.len(), 1000);
        let (d, n, crit) = ks_exponential(&g.gaps_ns, 1000.0, 0.01).unwrap();
        assert!(d < crit && n == 1000, "{d} {crit}");
        let regular = vec![1_000_000u64; 1000]; // constant 1 ms gaps
        let (d, _, crit) = ks_exponential(&regular, 1000.0, 0.01).unwrap();
        assert!(d > crit, "{d}");
        assert_eq!(ks_exponential(&regular[..10], 1000.0, 0.01), None);
    }
}
