//! The few system calls the generator makes outside mio: the monotonic clock (the one the
//! schedule, the latencies and the timer share), a timerfd that wakes the poll at a
//! scheduled send to the nanosecond (epoll's own timeout counts whole milliseconds), the
//! process's CPU time, and the open-file limit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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

/// A non-blocking CLOCK_MONOTONIC timerfd, armed at absolute times. It is never read:
/// each expiry is a new edge for the edge-triggered poll, and arming it again resets its
/// count (a system call saved per send).
pub struct Timer(OwnedFd);

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain system call; the fd it returns is owned here.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just created and is not owned elsewhere.
        Ok(Timer(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Fires once at CLOCK_MONOTONIC time at_ns (at once if that has passed).
    pub fn arm_at(&self, at_ns: u64) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000).max(1) as libc::c_long,
            },
        };
        // SAFETY: spec is valid; the old value is not asked for.
        unsafe { libc::timerfd_settime(self.0.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}
