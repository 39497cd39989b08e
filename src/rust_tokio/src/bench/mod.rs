//! The three benchmarks with the "fair" semantics of docs/spec.md: tokio tasks are the
//! processes, bounded mpsc channels of capacity 1 their mailboxes.

pub mod payload;
pub mod pingping;
pub mod spawn;
pub mod throughput;

/// Capacity of every channel that stands for a mailbox: an asynchronous send, as to an
/// actor, but no unbounded queue (Go's channels of capacity 1).
pub const MAILBOX: usize = 1;

// Markers (spec/cli.json "markers"; a test checks them against the built-in cli.json).
pub const MARKER_PINGPING_A: u8 = 65;
pub const MARKER_PINGPING_B: u8 = 66;
pub const MARKER_THROUGHPUT_SERVER: u8 = 83;
pub const MARKER_THROUGHPUT_CLIENT: u8 = 67;
/// spec/cli.json throughput_sample_min_interval_s
pub const THROUGHPUT_SAMPLE_MIN_INTERVAL_S: f64 = 0.1;

#[cfg(test)]
mod tests {
    #[test]
    fn constants_match_cli_json() {
        let s = crate::cli::spec();
        let m = &s["markers"];
        assert_eq!(m["pingping_a"], super::MARKER_PINGPING_A as u64);
        assert_eq!(m["pingping_b"], super::MARKER_PINGPING_B as u64);
        assert_eq!(m["throughput_server"], super::MARKER_THROUGHPUT_SERVER as u64);
        assert_eq!(m["throughput_client"], super::MARKER_THROUGHPUT_CLIENT as u64);
        assert_eq!(
            s["throughput_sample_min_interval_s"],
            super::THROUGHPUT_SAMPLE_MIN_INTERVAL_S
        );
    }
}
