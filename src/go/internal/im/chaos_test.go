package im

// The shared behaviour of docs/im.md beyond the transcript: the kill act on
// each kind of process, unbounded mailboxes, the send queue's count, clean-up
// after a crash, a nick free at once, replies in order, MEMORY.

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMailboxKill(t *testing.T) {
	m := newMailbox[int]()
	for i := 0; i < 3; i++ {
		m.push(i)
	}
	if v, ok := m.pop(nil); !ok || v != 0 {
		t.Fatalf("pop %v %v", v, ok)
	}
	if d := m.kill(); len(d) != 2 {
		t.Fatalf("kill dropped %d, want 2", len(d))
	}
	if _, ok := m.pop(nil); ok {
		t.Fatal("a killed mailbox handed out a message")
	}
	if m.push(9) || m.len() != 0 {
		t.Fatal("a killed mailbox took a message")
	}
}

// sessionOf returns the pair's session once a message has started it.
func sessionOf(t *testing.T, srv *Server, a, b string) *session {
	t.Helper()
	srv.sessions.mu.Lock()
	defer srv.sessions.mu.Unlock()
	s := srv.sessions.m[pairOf(a, b)]
	if s == nil {
		t.Fatal("no session")
	}
	return s
}

// A session killed with messages queued: they are dropped and counted, the
// victim's mailbox hands out nothing more, the successor gets what follows.
// More than the old bound of 256 queue up without blocking the sender.
func TestSessionKillAndUnboundedMailbox(t *testing.T) {
	srv, addr := startServer(t, Config{})
	a, b := dial(t, addr), dial(t, addr)
	a.register("a")
	b.register("b")
	a.send("PRIVMSG b :first")
	b.expect(":a!ua@127.0.0.1 PRIVMSG b :first")
	s := sessionOf(t, srv, "a", "b")
	ca, cb := srv.nicks.lookup("a"), srv.nicks.lookup("b")
	stalled := newMailbox[routed]() // an incarnation busy elsewhere: nothing serves it
	srv.sessions.mu.Lock()
	s.mb.Load().close()
	s.mb.Store(stalled)
	srv.sessions.mu.Unlock()
	const burst = 1000
	start := time.Now()
	for i := 0; i < burst; i++ {
		srv.route(ca, cb, "a", "b", []byte(fmt.Sprintf(":a!ua@127.0.0.1 PRIVMSG b :%d\r\n", i)))
	}
	if d := time.Since(start); d > 2*time.Second || stalled.len() != burst {
		t.Fatalf("burst: %d queued in %v", stalled.len(), d)
	}
	go s.run(srv, stalled) // the incarnation gets back to work: nothing was lost
	for i := 0; i < burst; i++ {
		b.expect(":a!ua@127.0.0.1 PRIVMSG b :" + strconv.Itoa(i))
	}

	victim := newMailbox[routed]()
	srv.sessions.mu.Lock()
	s.mb.Load().close()
	s.mb.Store(victim)
	srv.sessions.mu.Unlock()
	for i := 0; i < 5; i++ {
		a.send("PRIVMSG b :lost")
	}
	a.send("PING :sync")
	a.expect(":irc.serverbench PONG irc.serverbench :sync")
	srv.sessions.mu.Lock()
	srv.killSessionLocked(s)
	srv.sessions.mu.Unlock()
	if _, ok := victim.pop(nil); ok {
		t.Fatal("the killed incarnation's mailbox handed out a message")
	}
	a.send("PRIVMSG b :after")
	b.expect(":a!ua@127.0.0.1 PRIVMSG b :after")
	m := srv.Metrics()
	if m.SessionsKilled != 1 || m.SessionsRestarted != 1 || m.ChaosDropped != 5 {
		t.Fatalf("killed %d restarted %d dropped %d", m.SessionsKilled, m.SessionsRestarted, m.ChaosDropped)
	}
}

// A killed channel comes back with its members; a call it held is answered
// by the successor, a PRIVMSG it held is lost and counted.
func TestChannelKill(t *testing.T) {
	srv, addr := startServer(t, Config{})
	a, b, c := dial(t, addr), dial(t, addr), dial(t, addr)
	a.register("a")
	b.register("b")
	c.register("c")
	a.send("JOIN #r")
	a.skipTo(":irc.serverbench 366 a #r :End of NAMES list")
	b.send("JOIN #r")
	b.skipTo(":irc.serverbench 366 b #r :End of NAMES list")
	a.skipTo(":b!ub@127.0.0.1 JOIN #r")
	ch := srv.channelFor("#r", "", false)
	victim := newMailbox[chanOp]()
	ch.mb.Store(victim)        // the old incarnation serves nothing more: the victim is busy
	a.send("PRIVMSG #r :lost") // queued in the victim, lost with it
	c.send("JOIN #r")          // a call queued in the victim: posted again
	for deadline := time.Now().Add(10 * time.Second); victim.len() < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the operations did not reach the mailbox")
		}
		time.Sleep(time.Millisecond)
	}
	srv.channels.mu.Lock()
	srv.killChannelLocked(ch)
	srv.channels.mu.Unlock()
	c.expect(":c!uc@127.0.0.1 JOIN #r")
	c.expect(":irc.serverbench 353 c = #r :a b c")
	c.expect(":irc.serverbench 366 c #r :End of NAMES list")
	a.send("PRIVMSG #r :kept")
	b.expect(":c!uc@127.0.0.1 JOIN #r")
	b.expect(":a!ua@127.0.0.1 PRIVMSG #r :kept")
	m := srv.Metrics()
	if m.ChannelsKilled != 1 || m.ChannelsRestarted != 1 || m.ChaosDropped != 2 {
		t.Fatalf("killed %d restarted %d dropped %d", m.ChannelsKilled, m.ChannelsRestarted, m.ChaosDropped)
	}
}

// expectEOF reads until the connection ends.
func (p *peer) expectEOF() {
	p.t.Helper()
	_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := p.r.ReadString('\n'); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				p.t.Fatal("the connection is still open")
			}
			return
		}
	}
}

// A killed connection: EOF for its client, its nick free at once, QUIT to its
// channel peers; a crashed one is cleaned up the same way.
func TestConnectionKillAndCrash(t *testing.T) {
	srv, addr := startServer(t, Config{})
	a, b := dial(t, addr), dial(t, addr)
	a.register("a")
	b.register("b")
	a.send("JOIN #r")
	a.skipTo(":irc.serverbench 366 a #r :End of NAMES list")
	b.send("JOIN #r")
	a.skipTo(":b!ub@127.0.0.1 JOIN #r")
	srv.conns.mu.Lock()
	srv.killConnLocked(srv.nicks.lookup("a"))
	srv.conns.mu.Unlock()
	a2 := dial(t, addr)
	a2.register("a") // free at once
	a.expectEOF()
	b.skipTo(":a!ua@127.0.0.1 QUIT :Killed")
	if m := srv.Metrics(); m.ConnectionsKilled != 1 {
		t.Fatalf("connections_killed %d", m.ConnectionsKilled)
	}

	crash := "CRASHME"
	testCrashCommand.Store(&crash)
	defer testCrashCommand.Store(nil)
	a2.send("JOIN #r")
	b.skipTo(":a!ua@127.0.0.1 JOIN #r")
	a2.send("CRASHME")
	b.skipTo(":a!ua@127.0.0.1 QUIT :Connection crashed")
	a2.expectEOF()
	a3 := dial(t, addr)
	a3.register("a")
	a3.send("JOIN #r")
	a3.expect(":a!ua@127.0.0.1 JOIN #r")
	a3.expect(":irc.serverbench 353 a = #r :b a")                                      // the crashed client left the channel
	for deadline := time.Now().Add(10 * time.Second); srv.registeredNow.Load() != 2; { // the clean-ups may still be ending
		if time.Now().After(deadline) {
			t.Fatalf("registered now %d, want 2", srv.registeredNow.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// A line counts from its queuing until the write containing it returned: the
// writer's batch counts.
func TestSendqCountsTheWritersBatch(t *testing.T) {
	srv := New(Config{Protocol: testProtocol, SendqLines: 3})
	defer srv.Stop()
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	c := newClient(srv, p1)
	c.send([]byte("1\r\n"))
	c.send([]byte("2\r\n"))
	if lines, _, _ := c.q.take(); len(lines) != 2 { // the writer holds them, not yet written
		t.Fatalf("took %d", len(lines))
	}
	c.send([]byte("3\r\n"))
	if c.q.isOver() || c.q.len() != 3 {
		t.Fatalf("count %d over %v", c.q.len(), c.q.isOver())
	}
	c.send([]byte("4\r\n"))
	if !c.q.isOver() || srv.Metrics().SendqDisconnects != 1 {
		t.Fatal("a fourth line did not exceed a send queue of 3 lines")
	}
}

// Reconnecting at once with the same nick gets 001, 20 times out of 20.
func TestNickFreeOnClose(t *testing.T) {
	_, addr := startServer(t, Config{})
	for i := 0; i < 20; i++ {
		p := dial(t, addr)
		p.register("re")
		_ = p.c.Close()
	}
}

// JOIN #a,#b answers #a's JOIN, 353 and 366 before #b's; MEMORY answers.
func TestJoinOrderAndMemory(t *testing.T) {
	srv, addr := startServer(t, Config{})
	a := dial(t, addr)
	a.register("a")
	a.send("JOIN #x,#y,#z")
	for _, ch := range []string{"#x", "#y", "#z"} {
		a.expect(":a!ua@127.0.0.1 JOIN " + ch)
		a.expect(":irc.serverbench 353 a = " + ch + " :a")
		a.expect(":irc.serverbench 366 a " + ch + " :End of NAMES list")
	}
	a.send("MEMORY")
	_ = a.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := a.r.ReadString('\n')
	n, perr := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(l, ":irc.serverbench NOTICE a :live_bytes "), "\r\n"), 10, 64)
	if err != nil || perr != nil || n <= 0 {
		t.Fatalf("MEMORY answered %q", l)
	}
	if lb := srv.Metrics().LiveBytes; lb == nil || *lb != n {
		t.Fatalf("live_bytes %v", lb)
	}
}

// Chaos over every kind, picking queued mailboxes, under traffic: no deadlock,
// and every killed session or channel was restarted.
func TestChaosAnyQueued(t *testing.T) {
	srv, addr := startServer(t, Config{ChaosInterval: time.Millisecond, ChaosTarget: "any", ChaosPick: "queued", Seed: 3})
	// chaos may kill a connection before it registered: nothing here waits for a reply
	var ps []*peer
	for i := 0; i < 6; i++ {
		p := dial(t, addr)
		n := "p" + strconv.Itoa(i)
		_, _ = p.c.Write([]byte("NICK " + n + "\r\nUSER u 0 * :u\r\nJOIN #r\r\n"))
		ps = append(ps, p)
	}
	deadline := time.Now().Add(3 * time.Second)
	for srv.m.connsKilled.Load() < 2 && time.Now().Before(deadline) {
		for i, p := range ps {
			_, _ = p.c.Write([]byte("PRIVMSG #r :x\r\nPRIVMSG p" + strconv.Itoa((i+1)%6) + " :y\r\n"))
		}
		time.Sleep(time.Millisecond)
	}
	srv.Stop() // a consistent reading: no strike after this
	m := srv.Metrics()
	if m.SessionsKilled+m.ChannelsKilled+m.ConnectionsKilled == 0 || m.SessionsRestarted != m.SessionsKilled || m.ChannelsRestarted != m.ChannelsKilled {
		t.Fatalf("%+v", m)
	}
}
