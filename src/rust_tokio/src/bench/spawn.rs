//! spawn: N tasks that each signal readiness once and then stay dormant forever.

use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

pub struct SpawnResult {
    pub spawn_call: Duration,
    pub all_ready: Duration,
    pub rss_before: Option<i64>,
    pub rss_after: Option<i64>,
    pub ready: i64,
}

/// What every sleeper shares: the ready counter does what Go's atomic.Int64 does (the
/// last increment wakes main) and yields the exact count validation reports.
struct State {
    n: i64,
    ready: AtomicI64,
    all_ready: Notify,
}

/// Runs on a worker, as Go's main goroutine: spawned tasks go to that worker's queue.
pub async fn spawn(n: i64) -> SpawnResult {
    let st = Arc::new(State {
        n,
        ready: AtomicI64::new(0),
        all_ready: Notify::new(),
    });
    let rss_before = vm_rss();
    let t0 = Instant::now();
    for _ in 0..n {
        tokio::spawn(sleeper(st.clone()));
    }
    let spawn_call = t0.elapsed();
    // notify_one stores a permit when nobody waits yet, so the last sleeper's wake-up is
    // not lost if it comes before this await
    st.all_ready.notified().await;
    let all_ready = t0.elapsed();
    SpawnResult {
        spawn_call,
        all_ready,
        rss_before,
        rss_after: vm_rss(),
        ready: st.ready.load(Ordering::Acquire),
    }
}

async fn sleeper(st: Arc<State>) {
    if st.ready.fetch_add(1, Ordering::AcqRel) + 1 == st.n {
        st.all_ready.notify_one();
    }
    drop(st);
    // Dormant for ever: a task that is never woken again (the program prints its record
    // and exits without waking it).
    pending::<()>().await;
}

/// VmRSS of this process in bytes, from /proc/self/status; None when unreadable.
pub fn vm_rss() -> Option<i64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let f: Vec<&str> = line["VmRSS:".len()..].split_whitespace().collect();
    match f.as_slice() {
        [kb, "kB"] => kb.parse::<i64>().ok().map(|k| k * 1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_task_runs_once() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let r = rt.block_on(async { tokio::spawn(super::spawn(10_000)).await.unwrap() });
        assert_eq!(r.ready, 10_000);
        assert!(r.all_ready >= r.spawn_call);
        assert!(r.rss_before.is_some() && r.rss_after.is_some());
        rt.shutdown_background();
    }
}
