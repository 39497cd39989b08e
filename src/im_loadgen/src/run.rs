//! The generator's phases on one thread and one poll (docs/im.md): register the clients
//! (at most login_concurrency connecting or registering at once), join the channels
//! (fanout), then hold them idle (idle), or send on the open-loop schedule and drain
//! (latency, fanout). Every client answers PING in every phase (what each line does:
//! lines.rs; the schedule's sends: send.rs). The poll never sleeps: the generator's CPU is
//! its own, so it spins on a poll with a 0 timeout, which sends each event when it is due
//! and reads each byte soon after it arrives (the loop's clock: pace.rs).

use crate::conn::{Conn, State};
use crate::irc;
use crate::lines::{Ctx, Effects};
use crate::os;
use crate::pace::{self, Pace};
use crate::setup::{Mode, Setup};
use crate::stats::GapSample;
use crate::track::{Ledger, histogram};
use hdrhistogram::Histogram;
use mio::{Interest, Poll, Token, net::TcpStream};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

const EVENTS: usize = 1024;
/// One read takes up to this much (a busy receiver's socket may hold many lines).
const READ_BYTES: usize = 256 * 1024;

/// What happened: the raw counts and clocks the record is made of.
pub struct Outcome {
    pub elapsed_s: f64,
    pub connected: usize,
    pub registered: usize,
    pub failed: usize,
    pub login_s: Option<f64>,
    pub joined: usize,
    pub schedule_s: Option<f64>,
    pub scheduled: u64,
    pub sent: u64,
    pub warmup_scheduled: u64,
    pub warmup_sent: u64,
    pub ledger: Ledger,
    pub slip_ns: Histogram<u64>,
    pub pings: u64,
    pub error_numerics: u64,
    pub server_disconnects: u64,
    /// connections made again for clients the server closed before their 001 (reconnect)
    pub setup_reconnects: u64,
    /// CPU seconds (user + system) and wall seconds of the measured window (docs/im.md)
    pub window_cpu_s: f64,
    pub window_s: f64,
    /// CPU seconds from the measured schedule's start to the drain's end (latency, fanout)
    pub messaging_cpu_s: Option<f64>,
    /// the loop's busy share of the measured window, and its busy seconds from the measured
    /// schedule's start to the drain's end (pace.rs)
    pub busy_share: f64,
    pub messaging_busy_s: Option<f64>,
    /// read lateness over the measured window (and the drain)
    pub lateness_ns: Histogram<u64>,
    /// the measured sends' achieved gaps (a subsample; stats.rs)
    pub gaps: Option<GapSample>,
}

/// The generator: one poll (mio registers the sockets; os::wait reads its events into
/// `events`, reused), one connection slot per client (None once closed), the rest.
pub struct Gen {
    poll: Poll,
    events: Vec<libc::epoll_event>,
    pub(crate) conns: Vec<Option<Conn>>,
    pub(crate) ctx: Ctx,
    scratch: Vec<u8>,
    addr: SocketAddr,
    pub(crate) pace: Pace,
}

impl Gen {
    pub fn new(setup: Setup) -> std::io::Result<Gen> {
        let poll = Poll::new()?;
        os::precise_timers();
        let n = setup.clients;
        let addr = SocketAddr::from(([127, 0, 0, 1], setup.port));
        Ok(Gen {
            poll,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; EVENTS],
            conns: (0..n).map(|_| None).collect(),
            ctx: Ctx::new(setup),
            scratch: vec![0; READ_BYTES],
            addr,
            pace: Pace::new(os::now_ns()),
        })
    }

    /// Runs every phase of the mode and returns what happened.
    pub fn run(mut self) -> Outcome {
        let start = os::now_ns();
        let cpu = || {
            let (u, s) = os::cpu_s();
            u + s
        };
        let cpu0 = cpu();
        let login = self.ctx.setup.mode == Mode::Login;
        self.pace.measuring = login; // the storm is login mode's measured window
        let busy0 = self.pace.mark();
        self.register_all();
        self.pace.measuring = false;
        let login_done = os::now_ns();
        let setup = &self.ctx.setup;
        let (mode, duration_ns) = (setup.mode, (setup.duration_s * 1e9) as u64);
        let warmup_ns = (setup.warmup_s * 1e9) as u64;
        let mut out_schedule = (None, 0, 0, histogram(), None, (0, 0));
        let (mut busy_share, mut messaging_busy_s, mut gaps) = (0.0, None, None);
        let (window_cpu_s, window_s) = match mode {
            Mode::Login => {
                busy_share = pace::share(busy0, self.pace.mark());
                (cpu() - cpu0, (login_done - start) as f64 * 1e-9)
            }
            Mode::Idle => {
                let (c, t, b) = (cpu(), os::now_ns(), self.pace.mark());
                self.pace.measuring = true;
                self.pump_until(t + duration_ns, |_| false);
                self.pace.measuring = false;
                busy_share = pace::share(b, self.pace.mark());
                let window = (cpu() - c, (os::now_ns() - t) as f64 * 1e-9);
                self.ask_memory();
                window
            }
            // without every client (and, in fanout, every member) there is no run to measure
            Mode::Latency | Mode::Fanout if self.ctx.registered < self.ctx.setup.clients => (0.0, 0.0),
            Mode::Fanout if !self.join_all() => (0.0, 0.0),
            Mode::Latency | Mode::Fanout => {
                let drain_ns = (self.ctx.setup.drain_s * 1e9) as u64;
                let s = self.send_schedule(warmup_ns, duration_ns, drain_ns);
                // the measured window: from the first measured send (the warm-up's end)
                let (t, c, b) = s
                    .measured_from
                    .unwrap_or_else(|| (os::now_ns(), cpu(), self.pace.mark()));
                let span = (os::now_ns() - t) as f64 * 1e-9;
                let window = (cpu() - c, span);
                busy_share = pace::share(b, self.pace.mark());
                let all_in = |c: &Ctx| {
                    c.ledger.delivered + c.ledger.warmup_delivered >= c.ledger.expected + c.ledger.warmup_expected
                };
                self.pump_until(os::now_ns() + drain_ns, all_in);
                self.pace.measuring = false;
                messaging_busy_s = Some((self.pace.busy_ns - b.0) as f64 * 1e-9);
                gaps = Some(s.gaps);
                let warm = (s.warmup_scheduled, s.warmup_sent);
                out_schedule = (Some(span), s.scheduled, s.sent, s.slip, Some(cpu() - c), warm);
                window
            }
        };
        let c = self.ctx;
        let login_s = match (c.first_connect_ns, c.failed) {
            (Some(first), 0) if c.registered > 0 => Some((c.last_welcome_ns - first) as f64 * 1e-9),
            _ => None,
        };
        Outcome {
            elapsed_s: (os::now_ns() - start) as f64 * 1e-9,
            connected: c.connected,
            registered: c.registered,
            failed: c.failed,
            login_s,
            joined: c.joined,
            schedule_s: out_schedule.0,
            scheduled: out_schedule.1,
            sent: out_schedule.2,
            warmup_scheduled: out_schedule.5.0,
            warmup_sent: out_schedule.5.1,
            ledger: c.ledger,
            slip_ns: out_schedule.3,
            pings: c.pings,
            error_numerics: c.error_numerics,
            server_disconnects: c.server_disconnects,
            setup_reconnects: c.setup_reconnects,
            window_cpu_s,
            window_s,
            messaging_cpu_s: out_schedule.4,
            busy_share,
            messaging_busy_s,
            lateness_ns: self.pace.lateness_ns,
            gaps,
        }
    }

    /// Connects and registers every client (bounded concurrency); the ones not registered
    /// by --timeout-s count as failed.
    fn register_all(&mut self) {
        let deadline = os::now_ns() + (self.ctx.setup.timeout_s * 1e9) as u64;
        self.connect_more();
        let n = self.ctx.setup.clients;
        self.pump_until(deadline, |c| c.registered + c.failed >= n);
        // time is up: the clients never started (or waiting to reconnect) fail, and closing
        // a straggler starts no other
        self.ctx.failed += n - self.ctx.next_to_connect + self.ctx.to_reconnect.len();
        self.ctx.next_to_connect = n;
        self.ctx.to_reconnect.clear();
        for i in 0..n {
            if self.conns[i].as_ref().is_some_and(|c| c.state != State::Registered) {
                self.close(i, false);
            }
        }
    }

    /// After the idle hold: one registered client sends MEMORY (the server collects and
    /// keeps its live bytes for its record, docs/im.md) and waits for the answer, so that
    /// the server has measured before it is told to stop; at most --timeout-s.
    fn ask_memory(&mut self) {
        let Some(i) =
            (0..self.conns.len()).find(|&i| self.conns[i].as_ref().is_some_and(|c| c.state == State::Registered))
        else {
            return;
        };
        self.ctx.memory_from = Some(i);
        if self.conns[i].as_mut().is_some_and(|c| c.send(b"MEMORY\r\n").is_err()) {
            return self.close(i, true);
        }
        let deadline = os::now_ns() + (self.ctx.setup.timeout_s * 1e9) as u64;
        self.pump_until(deadline, |c| c.memory_answered);
    }

    /// Joins every client to its channel; whether all saw their JOIN echo in time.
    fn join_all(&mut self) -> bool {
        let k = self.ctx.setup.channel_size;
        for i in 0..self.conns.len() {
            if let Some(c) = self.conns[i].as_mut() {
                let line = format!("JOIN {}\r\n", irc::channel(i / k));
                if c.send(line.as_bytes()).is_err() {
                    self.close(i, true);
                }
            }
        }
        let deadline = os::now_ns() + (self.ctx.setup.timeout_s * 1e9) as u64;
        let want = self.ctx.registered;
        self.pump_until(deadline, |c| c.joined >= want);
        self.ctx.joined >= want
    }

    fn connect_more(&mut self) {
        while self.ctx.in_flight < self.ctx.setup.login_concurrency
            && (!self.ctx.to_reconnect.is_empty() || self.ctx.next_to_connect < self.ctx.setup.clients)
        {
            let i = self.ctx.to_reconnect.pop().unwrap_or_else(|| {
                self.ctx.next_to_connect += 1;
                self.ctx.next_to_connect - 1
            });
            self.ctx.first_connect_ns.get_or_insert_with(os::now_ns);
            let stream = TcpStream::connect(self.addr);
            let registered = stream.and_then(|mut s| {
                // no Nagle: a client's message must not wait in its own socket for the ACK of
                // its previous one (up to the peer's 40 ms delayed ACK), a delay the latency
                // would count and the slip would not
                s.set_nodelay(true)?;
                self.poll
                    .registry()
                    .register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE)?;
                Ok(s)
            });
            match registered {
                Ok(s) => {
                    self.conns[i] = Some(Conn::new(s));
                    self.ctx.in_flight += 1;
                }
                Err(_) => self.ctx.failed += 1,
            }
        }
    }

    /// Polls and handles events until `done` or the deadline (CLOCK_MONOTONIC ns).
    fn pump_until(&mut self, deadline_ns: u64, done: impl Fn(&Ctx) -> bool) {
        loop {
            let now = os::now_ns();
            if done(&self.ctx) || now >= deadline_ns {
                return;
            }
            self.turn();
        }
    }

    /// One poll that does not wait (a busy poll), and its events; the loop's clock (pace.rs)
    /// is read on each side of it. Readable: data, the peer's end or an error (mio's
    /// is_readable or is_read_closed); writable: EPOLLOUT.
    pub(crate) fn turn(&mut self) {
        const READ: u32 = (libc::EPOLLIN | libc::EPOLLPRI | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        let start = os::now_ns();
        self.pace.before_poll(start);
        let n = match os::wait(self.poll.as_raw_fd(), &mut self.events, Some(start)) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
            Err(e) => panic!("poll failed: {e}"),
        };
        let reads = self.events[..n].iter().filter(|e| e.events & READ != 0).count();
        self.pace.after_poll(n, reads as u64, n == self.events.len());
        for k in 0..n {
            let (bits, token) = (self.events[k].events, self.events[k].u64);
            self.on_ready(token as usize, bits & READ != 0, bits & libc::EPOLLOUT as u32 != 0);
        }
    }

    fn on_ready(&mut self, i: usize, readable: bool, writable: bool) {
        let Some(conn) = self.conns[i].as_mut() else { return };
        if conn.state == State::Connecting {
            if let Ok(Some(e)) | Err(e) = conn.stream.take_error() {
                // refused: no server listening, a failed registration; reset after the server
                // accepted it (a chaos kill before the client saw its connect complete): set up
                // again, as a kill while it registers is
                if e.kind() != std::io::ErrorKind::ConnectionRefused && self.reconnect(i) {
                    return;
                }
                return self.close(i, false);
            }
            match conn.stream.peer_addr() {
                Ok(_) => {
                    conn.state = State::Registering;
                    self.ctx.connected += 1;
                    if conn.send(&irc::registration(i)).is_err() {
                        if !self.reconnect(i) {
                            self.close(i, false);
                        }
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotConnected => return,
                Err(_) => return self.close(i, false),
            }
        }
        if writable && conn.flush().is_err() {
            if !self.reconnect(i) {
                self.close(i, true);
            }
            return;
        }
        if !readable {
            return;
        }
        let mut fx = Effects::default();
        let (ctx, state) = (&mut self.ctx, conn.state);
        let open = conn.read_lines(&mut self.scratch, |line| ctx.on_line(i, state, line, &mut fx));
        if fx.welcome {
            conn.state = State::Registered;
            self.ctx.registered += 1;
            self.ctx.in_flight -= 1;
            self.ctx.last_welcome_ns = os::now_ns();
            self.connect_more();
        }
        let conn = self.conns[i].as_mut().expect("still open");
        if fx.joined && !conn.joined {
            conn.joined = true;
            self.ctx.joined += 1;
        }
        let sent = if fx.replies.is_empty() {
            Ok(())
        } else {
            conn.send(&fx.replies)
        };
        // a refusal is the server's answer, not a kill: never reconnected
        let ended = fx.refused || !matches!(open, Ok(true)) || sent.is_err();
        if ended && (fx.refused || !self.reconnect(i)) {
            self.close(i, true);
        }
    }

    /// A client whose connection the server closed (EOF or reset, not a refusal) while it
    /// was connecting or registering is connected again in the latency and fanout modes: there registration
    /// is setup, not what is measured, and a real IRC client reconnects. A chaos that kills
    /// connections from the server's start would otherwise take a client before its 001 and
    /// fail the run's setup (docs/im.md). Not in login mode, whose storm measures
    /// registration, nor in idle mode, which measures how many clients a server holds: a
    /// server that drops a client there must not get it back. Bounded by the setup's
    /// --timeout-s, as every registration is. False: not done.
    fn reconnect(&mut self, i: usize) -> bool {
        let state = self.conns[i].as_ref().map(|c| c.state);
        let in_setup = matches!(state, Some(State::Connecting | State::Registering));
        let measured_after_setup = matches!(self.ctx.setup.mode, Mode::Latency | Mode::Fanout);
        if !in_setup || !measured_after_setup {
            return false;
        }
        let mut conn = self.conns[i].take().expect("in setup");
        let _ = self.poll.registry().deregister(&mut conn.stream);
        self.ctx.setup_reconnects += 1;
        if state == Some(State::Registering) {
            self.ctx.connected -= 1; // counted again when it connects
        }
        self.ctx.in_flight -= 1;
        self.ctx.to_reconnect.push(i);
        self.connect_more();
        true
    }

    /// Drops a connection; `by_server`: the server ended it (counted once registered),
    /// else a registration that failed.
    pub(crate) fn close(&mut self, i: usize, by_server: bool) {
        let Some(mut conn) = self.conns[i].take() else { return };
        let _ = self.poll.registry().deregister(&mut conn.stream);
        match conn.state {
            State::Registered => self.ctx.server_disconnects += u64::from(by_server),
            State::Connecting | State::Registering => {
                self.ctx.failed += 1;
                self.ctx.in_flight -= 1;
                self.connect_more();
            }
            State::Closed => {}
        }
        conn.state = State::Closed;
    }
}
