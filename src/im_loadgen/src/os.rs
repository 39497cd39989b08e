//! The few system calls the generator and the sink make outside mio: the monotonic clock
//! (the one the schedule, the latencies and the poll's timeout share), the poll's wait to
//! the nanosecond (epoll_wait's own timeout counts whole milliseconds; the generator waits
//! 0 ns, it busy-polls), the process's CPU time and resident memory, and the open-file limit.

use std::io;
use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// (user, system) CPU seconds of this process so far.
pub fn cpu_s() -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// How many times this process was preempted (getrusage's involuntary context switches):
/// a busy-polling generator never sleeps, so each one is the scheduler running something
/// else on its CPU.
pub fn involuntary_switches() -> u64 {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_nivcsw as u64
}

/// Raises the soft open-file limit to the hard one (one socket per client).
pub fn raise_open_files() {
    // SAFETY: rlimit is plain data; get/setrlimit read and write it.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// The poll's wait, to the nanosecond: epoll_pwait2 (Linux 5.11) with a relative timeout
/// until `deadline_ns` (CLOCK_MONOTONIC; None: no timeout), on the epoll fd mio created and
/// registers the sockets with (edge-triggered, each event's data the mio token). It replaces
/// a timerfd armed per scheduled send, one system call fewer per message. With the thread's
/// timer slack set to 1 ns (`precise_timers`) the kernel wakes it at the deadline, not up to
/// 50 us later. Where epoll_pwait2 is missing (ENOSYS) it falls back to epoll_wait's whole
/// milliseconds, rounded up (never early). Returns the number of events, or the error.
pub fn wait(epfd: RawFd, events: &mut [libc::epoll_event], deadline_ns: Option<u64>) -> io::Result<usize> {
    let max = events.len().min(i32::MAX as usize) as libc::c_int;
    let left = deadline_ns.map(|d| d.saturating_sub(now_ns()));
    let ts = left.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: events is a valid buffer of max entries; tsp is null or a valid timespec.
    let n = unsafe {
        libc::syscall(
            libc::SYS_epoll_pwait2,
            epfd,
            events.as_mut_ptr(),
            max,
            tsp,
            std::ptr::null::<libc::sigset_t>(),
            0,
        )
    };
    if n >= 0 {
        return Ok(n as usize);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::ENOSYS) {
        return Err(err);
    }
    let ms = left.map_or(-1, |ns| ns.div_ceil(1_000_000).min(i32::MAX as u64) as libc::c_int);
    // SAFETY: as above.
    let n = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), max, ms) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Sets this thread's timer slack to 1 ns, so that a timed wait ends at its deadline.
pub fn precise_timers() {
    // SAFETY: plain prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Resident memory in bytes (/proc/self/statm's second field x the page size): what the
/// sink's MEMORY answers (it has no collector; its heap is what it holds).
pub fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .unwrap_or(0);
    // SAFETY: sysconf with a valid name.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}
