//! throughput: P server/client task pairs exchanging B-byte messages for T seconds, each
//! server reporting to one aggregator every K exchanges.

use super::payload::{Msg, Owned, check_message};
use super::{MAILBOX, MARKER_THROUGHPUT_CLIENT, MARKER_THROUGHPUT_SERVER, THROUGHPUT_SAMPLE_MIN_INTERVAL_S};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

#[derive(Default)]
pub struct ThroughputResult {
    pub elapsed: Duration,
    pub reported_exchanges: i64, // summed by the aggregator from reports
    pub counted_exchanges: i64,  // sum of the servers' own totals
    pub payload_errors: i64,
    pub min_pair_exchanges: i64,
    pub samples: Vec<[f64; 2]>, // [t_s, cumulative exchanges]
}

/// A server's message to the aggregator: n exchanges, or, when final, the remainder
/// (count mod K) in n plus the server's own total and the payload errors its pair saw.
struct Report {
    n: i64,
    is_final: bool,
    total: i64,
    errors: i64,
}

/// Runs on a worker (the main process is a task). Every task exists before the clock.
pub async fn throughput(p: usize, b: usize, d: Duration, k: i64, copy_payload: bool) -> ThroughputResult {
    let stop = Arc::new(AtomicBool::new(false));
    // the start signal carries t0, so the aggregator's clock is the main process's
    let (start_tx, start_rx) = watch::channel(None::<Instant>);
    let (agg_tx, agg_rx) = mpsc::channel::<Report>(MAILBOX);
    for _ in 0..p {
        let (to_client, client_in) = mpsc::channel::<Msg>(MAILBOX);
        let (to_server, server_in) = mpsc::channel::<Msg>(MAILBOX);
        let (errs_tx, errs_rx) = oneshot::channel();
        let own = Owned::new(b, MARKER_THROUGHPUT_SERVER, 1, copy_payload);
        tokio::spawn(client(client_in, to_server, errs_tx, b, copy_payload));
        tokio::spawn(server(
            to_client,
            server_in,
            errs_rx,
            agg_tx.clone(),
            stop.clone(),
            start_rx.clone(),
            own,
            b,
            k,
        ));
    }
    drop(agg_tx);
    let (done_tx, done_rx) = oneshot::channel();
    tokio::spawn(aggregator(agg_rx, p, start_rx, done_tx));

    start_tx.send_replace(Some(Instant::now())); // the clock starts; the start signal to every server
    tokio::time::sleep(d).await;
    stop.store(true, Ordering::Relaxed);
    done_rx.await.expect("aggregator finished")
}

#[allow(clippy::too_many_arguments)]
async fn server(
    to_client: mpsc::Sender<Msg>,
    mut inbox: mpsc::Receiver<Msg>,
    client_errs: oneshot::Receiver<i64>,
    agg: mpsc::Sender<Report>,
    stop: Arc<AtomicBool>,
    mut start: watch::Receiver<Option<Instant>>,
    mut own: Owned,
    b: usize,
    k: i64,
) {
    let _ = start.wait_for(Option::is_some).await;
    let mut msg = own.first();
    let (mut count, mut errors) = (0i64, 0i64);
    let mut until_report = k; // a countdown, not count % k: no division per exchange
    loop {
        if to_client.send(msg).await.is_err() {
            break;
        }
        let Some(m) = inbox.recv().await else { break };
        if !check_message(&m, b, MARKER_THROUGHPUT_CLIENT) {
            errors += 1;
        }
        count += 1;
        until_report -= 1;
        if until_report == 0 {
            let _ = agg
                .send(Report {
                    n: k,
                    is_final: false,
                    total: 0,
                    errors: 0,
                })
                .await;
            until_report = k;
        }
        if stop.load(Ordering::Relaxed) {
            break; // read once per exchange
        }
        msg = own.reply(m);
    }
    drop(to_client); // the client's loop ends
    errors += client_errs.await.unwrap_or(0);
    let _ = agg
        .send(Report {
            n: count % k,
            is_final: true,
            total: count,
            errors,
        })
        .await;
}

async fn client(
    mut inbox: mpsc::Receiver<Msg>,
    out: mpsc::Sender<Msg>,
    errs: oneshot::Sender<i64>,
    b: usize,
    copy: bool,
) {
    let mut own = Owned::new(b, MARKER_THROUGHPUT_CLIENT, 1, copy);
    let mut errors = 0i64;
    while let Some(m) = inbox.recv().await {
        if !check_message(&m, b, MARKER_THROUGHPUT_SERVER) {
            errors += 1;
        }
        if out.send(own.reply(m)).await.is_err() {
            break;
        }
    }
    let _ = errs.send(errors);
}

async fn aggregator(
    mut agg: mpsc::Receiver<Report>,
    p: usize,
    mut start: watch::Receiver<Option<Instant>>,
    done: oneshot::Sender<ThroughputResult>,
) {
    let t0 = start
        .wait_for(Option::is_some)
        .await
        .map(|v| v.expect("set"))
        .unwrap_or_else(|_| Instant::now());
    let min_interval = Duration::from_secs_f64(THROUGHPUT_SAMPLE_MIN_INTERVAL_S);
    let mut res = ThroughputResult::default();
    let mut last_sample = Duration::ZERO; // the clock's start counts as the previous sample
    let mut cumulative = 0i64;
    let mut finals = 0usize;
    while finals < p {
        let Some(r) = agg.recv().await else { break };
        cumulative += r.n;
        if r.is_final {
            if finals == 0 || r.total < res.min_pair_exchanges {
                res.min_pair_exchanges = r.total;
            }
            finals += 1;
            res.counted_exchanges += r.total;
            res.payload_errors += r.errors;
        }
        let now = t0.elapsed();
        if now - last_sample >= min_interval {
            res.samples.push([now.as_secs_f64(), cumulative as f64]);
            last_sample = now;
        }
    }
    res.elapsed = t0.elapsed(); // the clock stops: all P finals are here
    res.reported_exchanges = cumulative;
    res.samples.push([res.elapsed.as_secs_f64(), cumulative as f64]);
    let _ = done.send(res);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn reports_add_up() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        for copy in [true, false] {
            let r = rt.block_on(async {
                tokio::spawn(super::throughput(3, 100, Duration::from_millis(150), 7, copy))
                    .await
                    .unwrap()
            });
            assert_eq!(r.reported_exchanges, r.counted_exchanges);
            assert_eq!(r.payload_errors, 0);
            assert!(r.min_pair_exchanges >= 1 && r.reported_exchanges >= 3);
            assert!(r.elapsed >= Duration::from_millis(150));
            assert_eq!(r.samples.last().unwrap()[1], r.reported_exchanges as f64);
        }
    }
}
