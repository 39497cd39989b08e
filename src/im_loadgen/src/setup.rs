//! What a run is asked to do: the mode and the command line's params with the spec's
//! constants, as main builds them (main.rs, setup_of).

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Latency,
    Idle,
    Login,
    Fanout,
}

/// What a run is asked to do (the command line's params and the spec's constants).
pub struct Setup {
    pub mode: Mode,
    pub clients: usize,
    pub rate_per_s: f64,
    pub poisson: bool,
    /// the warm-up before the measured schedule (latency, fanout): 0 = none
    pub warmup_s: f64,
    pub duration_s: f64,
    pub drain_s: f64,
    pub seed: u64,
    pub channel_size: usize,
    pub payload_bytes: usize,
    pub timeout_s: f64,
    pub port: u16,
    pub login_concurrency: usize,
    /// the inter-send gaps the KS test takes (spec: inter_send_ks_gaps)
    pub ks_gaps: usize,
}
