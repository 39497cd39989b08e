//! The server over real loopback sockets: the protocol subset line by line, one session per
//! nick pair under chaos, and the bounded send queue's disconnect.

use super::proto::Protocol;
use super::{Server, Settings, conn};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Only keeps a broken server from hanging a test.
const GUARD: Duration = Duration::from_secs(10);

pub(super) struct Running {
    pub(super) srv: Arc<Server>,
    pub(super) port: u16,
    _stop: watch::Sender<bool>,
}

pub(super) async fn start(sendq_lines: usize, chaos_ms: u64) -> Running {
    start_with(sendq_lines, chaos_ms, "session", "random").await
}

pub(super) async fn start_with(sendq_lines: usize, chaos_ms: u64, target: &str, pick: &str) -> Running {
    let (stop, stopped) = watch::channel(false);
    let settings = Settings {
        protocol: Protocol::from_spec(&crate::cli::spec()).unwrap(),
        sendq_lines,
        chaos_interval: (chaos_ms > 0).then(|| Duration::from_millis(chaos_ms)),
        chaos_target: target.into(),
        chaos_pick: pick.into(),
        seed: 7,
    };
    let srv = Server::start(settings, stopped.clone());
    let ln = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = ln.local_addr().unwrap().port();
    let s = srv.clone();
    tokio::spawn(async move {
        while let Ok((c, _)) = ln.accept().await {
            tokio::spawn(conn::connection(s.clone(), c, stopped.clone()));
        }
    });
    Running { srv, port, _stop: stop }
}

pub(super) struct Peer {
    pub(super) r: BufReader<OwnedReadHalf>,
    pub(super) w: OwnedWriteHalf,
}

impl Peer {
    pub(super) async fn dial(port: u16) -> Peer {
        let (r, w) = TcpStream::connect(("127.0.0.1", port)).await.unwrap().into_split();
        Peer {
            r: BufReader::new(r),
            w,
        }
    }

    pub(super) async fn send(&mut self, lines: &[&str]) {
        for l in lines {
            self.w.write_all(format!("{l}\r\n").as_bytes()).await.unwrap();
        }
    }

    /// The next line, None at EOF.
    pub(super) async fn line(&mut self) -> Option<String> {
        let mut s = String::new();
        let n = tokio::time::timeout(GUARD, self.r.read_line(&mut s))
            .await
            .expect("a line within the guard time");
        (n.unwrap_or(0) > 0).then_some(s)
    }

    pub(super) async fn expect(&mut self, want: &str) {
        assert_eq!(self.line().await.as_deref(), Some(format!("{want}\r\n").as_str()));
    }

    pub(super) async fn skip_to(&mut self, want: &str) {
        while self.line().await.expect("not EOF") != format!("{want}\r\n") {}
    }

    pub(super) async fn register(&mut self, nick: &str) {
        self.send(&[&format!("NICK {nick}"), &format!("USER u{nick} 0 * :{nick}")])
            .await;
        self.expect(&format!(
            ":irc.serverbench 001 {nick} :Welcome to the serverbench IRC network {nick}!u{nick}@127.0.0.1"
        ))
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcript() {
    let s = start(4096, 0).await;
    let mut a = Peer::dial(s.port).await;
    a.send(&[
        "PRIVMSG x :hi",
        "FROB",
        "PING :x",
        "PONG :x",
        "NICK",
        "NICK 9lives",
        "NICK toolongnick",
        "USER onlytwo 0",
    ])
    .await;
    for _ in 0..3 {
        a.expect(":irc.serverbench 451 * :You have not registered").await;
    }
    a.expect(":irc.serverbench 431 * :No nickname given").await;
    a.expect(":irc.serverbench 432 * 9lives :Erroneous nickname").await;
    a.expect(":irc.serverbench 432 * toolongnick :Erroneous nickname").await;
    a.expect(":irc.serverbench 461 * USER :Not enough parameters").await;
    a.send(&["USER ualice 0 * :Alice", "NICK alice", "USER again 0 * :x"])
        .await; // either order
    a.expect(":irc.serverbench 001 alice :Welcome to the serverbench IRC network alice!ualice@127.0.0.1")
        .await;
    a.expect(":irc.serverbench 462 alice :You may not reregister").await;

    let mut b = Peer::dial(s.port).await;
    b.send(&["NICK ALICE"]).await; // nicks compare without case
    b.expect(":irc.serverbench 433 * ALICE :Nickname is already in use")
        .await;
    b.register("bob").await;

    a.send(&["", "PING :tok", "PING", "PONG :x", "FROB x"]).await;
    a.expect(":irc.serverbench PONG irc.serverbench :tok").await;
    a.expect(":irc.serverbench 409 alice :No origin specified").await;
    a.expect(":irc.serverbench 421 alice FROB :Unknown command").await;

    a.send(&[
        "PRIVMSG Bob :hello there",
        "PRIVMSG",
        "PRIVMSG bob",
        "PRIVMSG carol :hi",
    ])
    .await;
    b.expect(":alice!ualice@127.0.0.1 PRIVMSG bob :hello there").await;
    a.expect(":irc.serverbench 411 alice :No recipient given (PRIVMSG)")
        .await;
    a.expect(":irc.serverbench 412 alice :No text to send").await;
    a.expect(":irc.serverbench 401 alice carol :No such nick/channel").await;
    b.send(&["PRIVMSG alice :back"]).await;
    a.expect(":bob!ubob@127.0.0.1 PRIVMSG alice :back").await;

    let long = "x".repeat(511); // 511 + CRLF > 512
    let max = format!("PING :{}", "y".repeat(504)); // exactly 512 with CRLF
    a.send(&[&long, "PING :still", &max]).await;
    a.expect(":irc.serverbench 417 alice :Input line was too long").await;
    a.expect(":irc.serverbench PONG irc.serverbench :still").await;
    a.expect(&format!(":irc.serverbench PONG irc.serverbench :{}", "y".repeat(504)))
        .await;

    a.send(&["JOIN #Room"]).await;
    a.expect(":alice!ualice@127.0.0.1 JOIN #Room").await;
    a.expect(":irc.serverbench 353 alice = #Room :alice").await;
    a.expect(":irc.serverbench 366 alice #Room :End of NAMES list").await;
    b.send(&[
        "PRIVMSG #room :outside",
        "PART #room",
        "PART #nowhere",
        "PRIVMSG #nowhere :x",
        "JOIN bad",
        "JOIN",
    ])
    .await;
    b.expect(":irc.serverbench 404 bob #room :Cannot send to channel").await;
    b.expect(":irc.serverbench 442 bob #room :You're not on that channel")
        .await;
    b.expect(":irc.serverbench 403 bob #nowhere :No such channel").await;
    b.expect(":irc.serverbench 403 bob #nowhere :No such channel").await;
    b.expect(":irc.serverbench 403 bob bad :No such channel").await;
    b.expect(":irc.serverbench 461 bob JOIN :Not enough parameters").await;
    b.send(&["JOIN #room"]).await;
    b.expect(":bob!ubob@127.0.0.1 JOIN #Room").await;
    b.expect(":irc.serverbench 353 bob = #Room :alice bob").await;
    b.expect(":irc.serverbench 366 bob #Room :End of NAMES list").await;
    a.expect(":bob!ubob@127.0.0.1 JOIN #Room").await;

    let mut c = Peer::dial(s.port).await;
    c.register("carol").await;
    c.send(&["JOIN #room", "PRIVMSG #room :to all"]).await;
    c.expect(":carol!ucarol@127.0.0.1 JOIN #Room").await;
    c.expect(":irc.serverbench 353 carol = #Room :alice bob carol").await;
    c.expect(":irc.serverbench 366 carol #Room :End of NAMES list").await;
    for p in [&mut a, &mut b] {
        p.expect(":carol!ucarol@127.0.0.1 JOIN #Room").await;
        p.expect(":carol!ucarol@127.0.0.1 PRIVMSG #Room :to all").await;
    }
    b.send(&["PART #room :later", "PART"]).await;
    b.expect(":bob!ubob@127.0.0.1 PART #Room :later").await;
    b.expect(":irc.serverbench 461 bob PART :Not enough parameters").await;
    a.expect(":bob!ubob@127.0.0.1 PART #Room :later").await;
    c.expect(":bob!ubob@127.0.0.1 PART #Room :later").await;

    c.send(&["QUIT :gone"]).await;
    c.expect("ERROR :Closing Link").await;
    a.expect(":carol!ucarol@127.0.0.1 QUIT :gone").await;
    assert_eq!(c.line().await, None, "the connection is closed after QUIT");

    a.send(&["NICK al"]).await; // a nick change reaches the client and its channel peers
    a.expect(":alice!ualice@127.0.0.1 NICK :al").await;
    b.send(&["NICK alice"]).await; // the old nick is free again
    b.expect(":bob!ubob@127.0.0.1 NICK :alice").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_per_pair_restarted_after_each_kill() {
    let s = start(4096, 2).await;
    let (mut a, mut b) = (Peer::dial(s.port).await, Peer::dial(s.port).await);
    a.register("a").await;
    b.register("b").await;
    let m = &s.srv.m;
    let deadline = tokio::time::Instant::now() + GUARD;
    while m.killed.load(Ordering::Relaxed) < 3 && tokio::time::Instant::now() < deadline {
        a.send(&["PRIVMSG b :x"]).await;
        b.send(&["PRIVMSG a :y"]).await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // chaos goes on meanwhile: every kill seen so far must have been restarted
    let killed = m.killed.load(Ordering::Relaxed);
    while m.restarted.load(Ordering::Relaxed) < killed && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let (started, restarted) = (m.started.load(Ordering::Relaxed), m.restarted.load(Ordering::Relaxed));
    assert!(
        started == 1 && killed >= 3 && restarted >= killed,
        "started {started} killed {killed} restarted {restarted}"
    );
    a.send(&["QUIT"]).await; // a session ends with its client and is not restarted
    a.skip_to("ERROR :Closing Link").await;
    while !super::lock(&s.srv.sessions).by_key_is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(
        super::lock(&s.srv.sessions).by_key_is_empty(),
        "the session outlived its client"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_disconnected() {
    // the queue must hold a burst of replies to a client that reads (fast's 401s)
    let s = start(256, 0).await;
    let (mut slow, mut fast) = (Peer::dial(s.port).await, Peer::dial(s.port).await);
    slow.register("slow").await;
    fast.register("fast").await;
    let line = format!("PRIVMSG slow :{}", "z".repeat(400));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while s.srv.m.sendq_disconnects.load(Ordering::Relaxed) == 0 && tokio::time::Instant::now() < deadline {
        for _ in 0..100 {
            fast.send(&[&line]).await;
        }
        fast.send(&["PING :sync"]).await; // the server has read them all: at most 100 401s at once
        fast.skip_to(":irc.serverbench PONG irc.serverbench :sync").await;
    }
    assert_eq!(s.srv.m.sendq_disconnects.load(Ordering::Relaxed), 1);
    // slow's connection was closed: it reads what the kernel held, then EOF
    let delivered = format!(":fast!ufast@127.0.0.1 {line}\r\n");
    while let Some(l) = slow.line().await {
        let cut = delivered.starts_with(l.trim_end_matches("\r\n")); // a write cut inside a line
        assert!(
            l == delivered || l == "ERROR :SendQ exceeded\r\n" || cut,
            "slow read {l:?}"
        );
    }
    fast.send(&["PING :alive"]).await; // the sender is not affected
    loop {
        let l = fast.line().await.expect("fast is still connected");
        if l == ":irc.serverbench PONG irc.serverbench :alive\r\n" {
            break;
        }
        assert_eq!(l, ":irc.serverbench 401 fast slow :No such nick/channel\r\n");
    }
}
