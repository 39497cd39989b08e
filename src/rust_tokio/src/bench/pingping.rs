//! pingping (IMB PingPing): two tasks each send R messages of B bytes to the other,
//! starting at the same time.

use super::payload::{Msg, Owned, check_message};
use super::{MAILBOX, MARKER_PINGPING_A, MARKER_PINGPING_B};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

pub struct PingpingResult {
    pub elapsed: Duration,
    pub received_a: i64,
    pub received_b: i64,
    pub payload_errors: i64,
    /// replies that had to allocate because the peer still held the buffer (never expected;
    /// read by the tests)
    #[cfg_attr(not(test), allow(dead_code))]
    pub fallback_allocations: u64,
}

struct Side {
    received: i64,
    errors: i64,
    fallbacks: u64,
}

/// Runs inside the runtime, on a worker (the "main process" is a task, as Go's main
/// goroutine).
pub async fn pingping(b: usize, r: i64, copy_payload: bool) -> PingpingResult {
    let (to_a, in_a) = mpsc::channel::<Msg>(MAILBOX);
    let (to_b, in_b) = mpsc::channel::<Msg>(MAILBOX);
    let (start_tx, start_rx) = watch::channel(false);
    let (done_a_tx, done_a) = oneshot::channel();
    let (done_b_tx, done_b) = oneshot::channel();
    // Each side's own buffers are built here, before the clock (two each: see payload.rs).
    let own_a = Owned::new(b, MARKER_PINGPING_A, 2, copy_payload);
    let own_b = Owned::new(b, MARKER_PINGPING_B, 2, copy_payload);
    tokio::spawn(pinger(
        MARKER_PINGPING_B,
        in_a,
        to_b,
        own_a,
        b,
        r,
        start_rx.clone(),
        done_a_tx,
    ));
    tokio::spawn(pinger(MARKER_PINGPING_A, in_b, to_a, own_b, b, r, start_rx, done_b_tx));

    let t0 = Instant::now();
    start_tx.send_replace(true); // the start signal to both at once
    let a = done_a.await.expect("pinger A finished");
    let bb = done_b.await.expect("pinger B finished");
    let elapsed = t0.elapsed();
    PingpingResult {
        elapsed,
        received_a: a.received,
        received_b: bb.received,
        payload_errors: a.errors + bb.errors,
        fallback_allocations: a.fallbacks + bb.fallbacks,
    }
}

// No deadlock with capacity-1 mailboxes: each send follows one receive, so both
// mailboxes are never full while both sides are sending.
#[allow(clippy::too_many_arguments)]
async fn pinger(
    peer: u8,
    mut inbox: mpsc::Receiver<Msg>,
    out: mpsc::Sender<Msg>,
    mut own: Owned,
    b: usize,
    r: i64,
    mut start: watch::Receiver<bool>,
    done: oneshot::Sender<Side>,
) {
    let _ = start.wait_for(|s| *s).await;
    let _ = out.send(own.first()).await;
    let mut sent = 1i64;
    let (mut received, mut errors) = (0i64, 0i64);
    while received < r {
        let Some(m) = inbox.recv().await else { break };
        if !check_message(&m, b, peer) {
            errors += 1;
        }
        received += 1;
        if sent < r {
            let _ = out.send(own.reply(m)).await;
            sent += 1;
        }
    }
    let _ = done.send(Side {
        received,
        errors,
        fallbacks: own.fallback_allocations,
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_sides_receive_r_without_errors() {
        for copy in [true, false] {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap();
            let res = rt.block_on(async { tokio::spawn(super::pingping(1000, 500, copy)).await.unwrap() });
            assert_eq!((res.received_a, res.received_b, res.payload_errors), (500, 500, 0));
            assert_eq!(res.fallback_allocations, 0);
        }
    }
}
