//! The shared behaviour of docs/im.md beyond the transcript: the kill act on each kind of
//! process, unbounded mailboxes, the send queue's count, clean-up after a crash, a nick free
//! at once, replies in order, MEMORY.

use super::client::Client;
use super::lock;
use super::session::Supervisor;
use super::tests::{Peer, start, start_with};
use std::sync::atomic::Ordering;
use std::time::Duration;

const GUARD: Duration = Duration::from_secs(10);

async fn until(what: &str, f: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + GUARD;
    while !f() {
        assert!(tokio::time::Instant::now() < deadline, "waiting for {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

async fn expect_eof(p: &mut Peer) {
    while p.line().await.is_some() {}
}

/// A session killed with messages queued: they are dropped and counted, the successor gets
/// what follows. More than the old bound of 256 queue up without blocking the sender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_kill_and_unbounded_mailbox() {
    let s = start(4096, 0).await;
    let (mut a, mut b) = (Peer::dial(s.port).await, Peer::dial(s.port).await);
    a.register("a").await;
    b.register("b").await;
    a.send(&["PRIVMSG b :first"]).await;
    b.expect(":a!ua@127.0.0.1 PRIVMSG b :first").await;
    let sess = lock(&s.srv.sessions).get("a", "b").expect("a session");
    let (ca, cb) = (s.srv.lookup_nick("a").unwrap(), s.srv.lookup_nick("b").unwrap());
    let mut sup = Supervisor::new(&s.srv);
    let go = sup.stall(&sess);
    let t0 = std::time::Instant::now();
    for i in 0..1000 {
        let line = format!(":a!ua@127.0.0.1 PRIVMSG b :{i}\r\n");
        assert!(s.srv.route(&ca, &cb, "a", "b", line.as_bytes().into()));
    }
    assert!(
        t0.elapsed() < Duration::from_secs(2) && sess.queued() == 1000,
        "the burst waited"
    );
    let _ = go.send(()); // the incarnation gets back to work: nothing was lost
    for i in 0..1000 {
        b.expect(&format!(":a!ua@127.0.0.1 PRIVMSG b :{i}")).await;
    }

    let _stalled = sup.stall(&sess);
    for _ in 0..5 {
        a.send(&["PRIVMSG b :lost"]).await;
    }
    a.send(&["PING :sync"]).await;
    a.expect(":irc.serverbench PONG irc.serverbench :sync").await;
    assert_eq!(sess.queued(), 5);
    {
        let _reg = lock(&s.srv.sessions);
        sup.kill(&sess);
    }
    a.send(&["PRIVMSG b :after"]).await;
    b.expect(":a!ua@127.0.0.1 PRIVMSG b :after").await;
    let m = &s.srv.m;
    until("the victim's mailbox dropped", || {
        m.dropped.load(Ordering::Relaxed) == 5
    })
    .await;
    assert_eq!(
        (m.killed.load(Ordering::Relaxed), m.restarted.load(Ordering::Relaxed)),
        (1, 1)
    );
}

/// A killed channel comes back with its members; a call it held is answered by the
/// successor, a PRIVMSG it held is lost and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_kill_keeps_members() {
    let s = start(4096, 0).await;
    let (mut a, mut b, mut c) = (
        Peer::dial(s.port).await,
        Peer::dial(s.port).await,
        Peer::dial(s.port).await,
    );
    for (p, n) in [(&mut a, "a"), (&mut b, "b"), (&mut c, "c")] {
        p.register(n).await;
    }
    a.send(&["JOIN #r"]).await;
    a.skip_to(":irc.serverbench 366 a #r :End of NAMES list").await;
    b.send(&["JOIN #r"]).await;
    b.skip_to(":irc.serverbench 366 b #r :End of NAMES list").await;
    a.skip_to(":b!ub@127.0.0.1 JOIN #r").await;
    let ch = s.srv.channel_for("#r", "", false).expect("the channel");
    s.srv.stall_channel(&ch);
    a.send(&["PRIVMSG #r :lost"]).await;
    c.send(&["JOIN #r"]).await;
    until("two operations queued", || ch.queued() == 2).await;
    s.srv.kill_channel(&ch);
    c.expect(":c!uc@127.0.0.1 JOIN #r").await;
    c.expect(":irc.serverbench 353 c = #r :a b c").await;
    c.expect(":irc.serverbench 366 c #r :End of NAMES list").await;
    a.send(&["PRIVMSG #r :kept"]).await;
    b.expect(":c!uc@127.0.0.1 JOIN #r").await;
    b.expect(":a!ua@127.0.0.1 PRIVMSG #r :kept").await;
    let m = &s.srv.m;
    until("the victim's mailbox dropped", || {
        m.dropped.load(Ordering::Relaxed) == 2
    })
    .await;
    assert_eq!(
        (
            m.chans_killed.load(Ordering::Relaxed),
            m.chans_restarted.load(Ordering::Relaxed)
        ),
        (1, 1)
    );
}

/// A killed connection: EOF for its client, its nick free at once, QUIT to its channel
/// peers; a crashed one is cleaned up by its monitor the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_kill_and_crash_are_cleaned_up() {
    let s = start(4096, 0).await;
    let (mut a, mut b) = (Peer::dial(s.port).await, Peer::dial(s.port).await);
    a.register("a").await;
    b.register("b").await;
    a.send(&["JOIN #r"]).await;
    a.skip_to(":irc.serverbench 366 a #r :End of NAMES list").await;
    b.send(&["JOIN #r"]).await;
    a.skip_to(":b!ub@127.0.0.1 JOIN #r").await;
    let ca = s.srv.lookup_nick("a").unwrap();
    s.srv.kill_conn(&mut lock(&s.srv.conns), &ca);
    let mut a2 = Peer::dial(s.port).await;
    a2.register("a").await; // free at once
    expect_eof(&mut a).await;
    b.skip_to(":a!ua@127.0.0.1 QUIT :Killed").await;
    assert_eq!(s.srv.m.conns_killed.load(Ordering::Relaxed), 1);

    a2.send(&["JOIN #r"]).await;
    b.skip_to(":a!ua@127.0.0.1 JOIN #r").await;
    a2.send(&["CRASHME"]).await;
    b.skip_to(":a!ua@127.0.0.1 QUIT :Connection crashed").await;
    expect_eof(&mut a2).await;
    let mut a3 = Peer::dial(s.port).await;
    a3.register("a").await;
    a3.send(&["JOIN #r"]).await;
    a3.expect(":a!ua@127.0.0.1 JOIN #r").await;
    a3.expect(":irc.serverbench 353 a = #r :b a").await; // the crashed client left
    let now = &s.srv.m.registered_now;
    until("a, b and a3 registered", || now.load(Ordering::Relaxed) == 2).await;
}

/// A line counts from its queuing until the write containing it returned: the writer's
/// batch counts.
#[tokio::test]
async fn sendq_counts_the_writers_batch() {
    let s = start(3, 0).await;
    let (c, _rx) = Client::new(3);
    let l = |t: &str| -> super::client::Line { t.as_bytes().into() };
    c.send(&s.srv, l("1\r\n"));
    c.send(&s.srv, l("2\r\n"));
    c.writing(2); // the writer holds them, not yet written
    c.send(&s.srv, l("3\r\n"));
    assert_eq!((c.queued(), s.srv.m.sendq_disconnects.load(Ordering::Relaxed)), (3, 0));
    c.send(&s.srv, l("4\r\n"));
    assert_eq!(s.srv.m.sendq_disconnects.load(Ordering::Relaxed), 1);
}

/// Reconnecting at once with the same nick gets 001, 20 times out of 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nick_free_on_close() {
    let s = start(4096, 0).await;
    for _ in 0..20 {
        let mut p = Peer::dial(s.port).await;
        p.register("re").await;
        drop(p);
    }
}

/// JOIN #x,#y,#z answers each channel's JOIN, 353 and 366 in turn; MEMORY answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_order_and_memory() {
    let s = start(4096, 0).await;
    let mut a = Peer::dial(s.port).await;
    a.register("a").await;
    a.send(&["JOIN #x,#y,#z"]).await;
    for ch in ["#x", "#y", "#z"] {
        a.expect(&format!(":a!ua@127.0.0.1 JOIN {ch}")).await;
        a.expect(&format!(":irc.serverbench 353 a = {ch} :a")).await;
        a.expect(&format!(":irc.serverbench 366 a {ch} :End of NAMES list"))
            .await;
    }
    a.send(&["MEMORY"]).await;
    let l = a.line().await.unwrap();
    let n: i64 = l
        .strip_prefix(":irc.serverbench NOTICE a :live_bytes ")
        .and_then(|v| v.trim_end().parse().ok())
        .unwrap_or_else(|| panic!("MEMORY answered {l:?}"));
    assert!(n > 0 && s.srv.m.live_bytes.load(Ordering::Relaxed) == n);
}

/// Chaos over every kind, picking queued mailboxes, under traffic: no deadlock, and every
/// killed session or channel was restarted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_any_queued() {
    let s = start_with(4096, 1, "any", "queued").await;
    // chaos may kill a connection before it registered: nothing here waits for a reply
    let mut ps = Vec::new();
    for i in 0..6 {
        let mut p = Peer::dial(s.port).await;
        let setup = format!("NICK p{i}\r\nUSER u 0 * :u\r\nJOIN #r\r\n");
        let _ = tokio::io::AsyncWriteExt::write_all(&mut p.w, setup.as_bytes()).await;
        ps.push(p);
    }
    let m = &s.srv.m;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while m.conns_killed.load(Ordering::Relaxed) < 2 && tokio::time::Instant::now() < deadline {
        for (i, p) in ps.iter_mut().enumerate() {
            let line = format!("PRIVMSG #r :x\r\nPRIVMSG p{} :y\r\n", (i + 1) % 6);
            let _ = tokio::io::AsyncWriteExt::write_all(&mut p.w, line.as_bytes()).await;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // chaos goes on: every kill seen so far must be followed by its restart
    let l = |a: &std::sync::atomic::AtomicI64| a.load(Ordering::Relaxed);
    let (killed, chans_killed) = (l(&m.killed), l(&m.chans_killed));
    assert!(killed + chans_killed + l(&m.conns_killed) > 0);
    until("the restarts", || {
        l(&m.restarted) >= killed && l(&m.chans_restarted) >= chans_killed
    })
    .await;
}
