package im

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

var testProtocol = Protocol{ServerName: "irc.serverbench", LineMaxBytes: 512, NickMaxChars: 9, ChannelMaxChars: 50}

// startServer serves on a loopback port until the test ends.
func startServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Protocol = testProtocol
	if cfg.SendqLines == 0 {
		cfg.SendqLines = 4096
	}
	srv := New(cfg)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	conns := map[net.Conn]bool{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); srv.Serve(c); _ = c.Close() }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
		srv.Stop()
	})
	return srv, ln.Addr().String()
}

type peer struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *peer {
	t.Helper()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &peer{t, c, bufio.NewReader(c)}
}

func (p *peer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := p.c.Write([]byte(l + "\r\n")); err != nil {
			p.t.Fatal(err)
		}
	}
}

// expect reads the next line; the deadline only keeps a broken server from
// hanging the test.
func (p *peer) expect(want string) {
	p.t.Helper()
	_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := p.r.ReadString('\n')
	if err != nil {
		p.t.Fatalf("waiting for %q: %v", want, err)
	}
	if !strings.HasSuffix(got, "\r\n") || strings.TrimSuffix(got, "\r\n") != want {
		p.t.Fatalf("got %q, want %q", got, want+"\r\n")
	}
}

// skipTo reads lines until want.
func (p *peer) skipTo(want string) {
	p.t.Helper()
	for {
		_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := p.r.ReadString('\n')
		if err != nil {
			p.t.Fatalf("waiting for %q: %v", want, err)
		}
		if got == want+"\r\n" {
			return
		}
	}
}

func (p *peer) register(nick string) {
	p.t.Helper()
	p.send("NICK "+nick, "USER u"+nick+" 0 * :"+nick)
	p.expect(":irc.serverbench 001 " + nick + " :Welcome to the serverbench IRC network " + nick + "!u" + nick + "@127.0.0.1")
}

// The protocol subset, line by line: registration, one-to-one and channel
// messages, and every error numeric.
func TestTranscript(t *testing.T) {
	_, addr := startServer(t, Config{})
	a := dial(t, addr)
	a.send("PRIVMSG x :hi", "FROB", "PING :x", "PONG :x")
	a.expect(":irc.serverbench 451 * :You have not registered")
	a.expect(":irc.serverbench 451 * :You have not registered")
	a.expect(":irc.serverbench 451 * :You have not registered")
	a.send("NICK")
	a.expect(":irc.serverbench 431 * :No nickname given")
	a.send("NICK 9lives", "NICK toolongnick", "NICK a.b")
	a.expect(":irc.serverbench 432 * 9lives :Erroneous nickname")
	a.expect(":irc.serverbench 432 * toolongnick :Erroneous nickname")
	a.expect(":irc.serverbench 432 * a.b :Erroneous nickname")
	a.send("USER onlytwo 0")
	a.expect(":irc.serverbench 461 * USER :Not enough parameters")
	a.send("USER ualice 0 * :Alice", "NICK alice") // either order
	a.expect(":irc.serverbench 001 alice :Welcome to the serverbench IRC network alice!ualice@127.0.0.1")
	a.send("USER again 0 * :x")
	a.expect(":irc.serverbench 462 alice :You may not reregister")

	b := dial(t, addr)
	b.send("NICK ALICE") // nicks compare without case
	b.expect(":irc.serverbench 433 * ALICE :Nickname is already in use")
	b.register("bob")

	a.send("", "PING :tok", "PING")
	a.expect(":irc.serverbench PONG irc.serverbench :tok")
	a.expect(":irc.serverbench 409 alice :No origin specified")
	a.send("PONG :x", "FROB x")
	a.expect(":irc.serverbench 421 alice FROB :Unknown command")

	a.send("PRIVMSG Bob :hello there", "PRIVMSG", "PRIVMSG bob", "PRIVMSG carol :hi")
	b.expect(":alice!ualice@127.0.0.1 PRIVMSG bob :hello there")
	a.expect(":irc.serverbench 411 alice :No recipient given (PRIVMSG)")
	a.expect(":irc.serverbench 412 alice :No text to send")
	a.expect(":irc.serverbench 401 alice carol :No such nick/channel")
	b.send("PRIVMSG alice :back")
	a.expect(":bob!ubob@127.0.0.1 PRIVMSG alice :back")

	a.send(strings.Repeat("x", 511), "PING :still") // 511 + CRLF > 512
	a.expect(":irc.serverbench 417 alice :Input line was too long")
	a.expect(":irc.serverbench PONG irc.serverbench :still")
	a.send("PING :" + strings.Repeat("y", 504)) // exactly 512 with CRLF
	a.expect(":irc.serverbench PONG irc.serverbench :" + strings.Repeat("y", 504))

	a.send("JOIN #Room")
	a.expect(":alice!ualice@127.0.0.1 JOIN #Room")
	a.expect(":irc.serverbench 353 alice = #Room :alice")
	a.expect(":irc.serverbench 366 alice #Room :End of NAMES list")
	b.send("PRIVMSG #room :outside", "PART #room", "PART #nowhere", "PRIVMSG #nowhere :x", "JOIN bad", "JOIN")
	b.expect(":irc.serverbench 404 bob #room :Cannot send to channel")
	b.expect(":irc.serverbench 442 bob #room :You're not on that channel")
	b.expect(":irc.serverbench 403 bob #nowhere :No such channel")
	b.expect(":irc.serverbench 403 bob #nowhere :No such channel")
	b.expect(":irc.serverbench 403 bob bad :No such channel")
	b.expect(":irc.serverbench 461 bob JOIN :Not enough parameters")
	b.send("JOIN #room")
	b.expect(":bob!ubob@127.0.0.1 JOIN #Room")
	b.expect(":irc.serverbench 353 bob = #Room :alice bob")
	b.expect(":irc.serverbench 366 bob #Room :End of NAMES list")
	a.expect(":bob!ubob@127.0.0.1 JOIN #Room")

	c := dial(t, addr)
	c.register("carol")
	c.send("JOIN #room")
	c.expect(":carol!ucarol@127.0.0.1 JOIN #Room")
	c.expect(":irc.serverbench 353 carol = #Room :alice bob carol")
	c.expect(":irc.serverbench 366 carol #Room :End of NAMES list")
	a.expect(":carol!ucarol@127.0.0.1 JOIN #Room")
	b.expect(":carol!ucarol@127.0.0.1 JOIN #Room")

	c.send("PRIVMSG #room :to all")
	a.expect(":carol!ucarol@127.0.0.1 PRIVMSG #Room :to all")
	b.expect(":carol!ucarol@127.0.0.1 PRIVMSG #Room :to all")
	b.send("PART #room :later", "PART")
	b.expect(":bob!ubob@127.0.0.1 PART #Room :later")
	b.expect(":irc.serverbench 461 bob PART :Not enough parameters")
	a.expect(":bob!ubob@127.0.0.1 PART #Room :later")
	c.expect(":bob!ubob@127.0.0.1 PART #Room :later")

	c.send("QUIT :gone")
	c.expect("ERROR :Closing Link")
	a.expect(":carol!ucarol@127.0.0.1 QUIT :gone")
	c.send("PING :x")
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := c.r.ReadString('\n'); err == nil {
		t.Fatalf("the connection is still open after QUIT: %q", line)
	}

	a.send("NICK al") // a nick change reaches the client and its channel peers
	a.expect(":alice!ualice@127.0.0.1 NICK :al")
	b.send("NICK alice") // the old nick is free again
	b.expect(":bob!ubob@127.0.0.1 NICK :alice")
}

// One session per unordered pair; the supervisor restarts every session the
// chaos monkey kills.
func TestSessionsAndChaos(t *testing.T) {
	srv, addr := startServer(t, Config{ChaosInterval: 2 * time.Millisecond, Seed: 7})
	a, b := dial(t, addr), dial(t, addr)
	a.register("a")
	b.register("b")
	deadline := time.Now().Add(10 * time.Second)
	for srv.m.killed.Load() < 3 && time.Now().Before(deadline) {
		a.send("PRIVMSG b :x")
		b.send("PRIVMSG a :y")
		time.Sleep(time.Millisecond)
	}
	// chaos goes on meanwhile: every kill seen so far must have been restarted
	killed := srv.m.killed.Load()
	for srv.m.restarted.Load() < killed && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if started, restarted := srv.m.started.Load(), srv.m.restarted.Load(); started != 1 || killed < 3 || restarted < killed {
		t.Fatalf("started %d killed %d restarted %d", started, killed, restarted)
	}
	a.send("QUIT") // a session ends with its client and is not restarted
	a.skipTo("ERROR :Closing Link")
	left := func() (int, int) {
		srv.sessions.mu.Lock()
		defer srv.sessions.mu.Unlock()
		return len(srv.sessions.live), len(srv.sessions.m)
	}
	live, keyed := left()
	for ; live+keyed > 0 && time.Now().Before(deadline); live, keyed = left() {
		time.Sleep(time.Millisecond)
	}
	if live+keyed != 0 {
		t.Fatalf("sessions left: %d live, %d keyed", live, keyed)
	}
}

// A client that never reads is disconnected once its queue is full, counted once.
func TestSendqDisconnect(t *testing.T) {
	// the queue must hold a burst of replies to a client that reads (fast's 401s)
	srv, addr := startServer(t, Config{SendqLines: 256})
	slow, fast := dial(t, addr), dial(t, addr)
	slow.register("slow")
	fast.register("fast")
	line := "PRIVMSG slow :" + strings.Repeat("z", 400)
	deadline := time.Now().Add(20 * time.Second)
	for srv.m.sendqDisconnects.Load() == 0 && time.Now().Before(deadline) {
		for i := 0; i < 100; i++ {
			fast.send(line)
		}
		fast.send("PING :sync") // the server has read them all: at most 100 401s come at once
		fast.skipTo(":irc.serverbench PONG irc.serverbench :sync")
	}
	if got := srv.Metrics().SendqDisconnects; got != 1 {
		t.Fatalf("sendq_disconnects %d, want 1", got)
	}
	// slow's connection was closed: it reads what the kernel held, then EOF
	_ = slow.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		l, err := slow.r.ReadString('\n')
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("slow's connection is still open")
			}
			break
		}
		// the server's write may have been cut inside a line: ERROR then starts a line of its own
		if l != ":fast!ufast@127.0.0.1 "+line+"\r\n" && l != "ERROR :SendQ exceeded\r\n" &&
			!(strings.HasPrefix(":fast!ufast@127.0.0.1 "+line, strings.TrimSuffix(l, "\r\n"))) {
			t.Fatalf("slow read %q", l)
		}
	}
	fast.send("PING :alive") // the sender is not affected
	for {
		_ = fast.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		l, err := fast.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if l == ":irc.serverbench PONG irc.serverbench :alive\r\n" {
			break
		}
		if l != ":irc.serverbench 401 fast slow :No such nick/channel\r\n" {
			t.Fatalf("unexpected %q %+v", l, srv.Metrics())
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in     string
		cmd    string
		params []string
		ok     bool
	}{
		{"privmsg a :b c", "PRIVMSG", []string{"a", "b c"}, true},
		{":pre NICK  x", "NICK", []string{"x"}, true},
		{":pre", "", nil, false},
		{"   ", "", nil, true},
		{"PRIVMSG a ::x", "PRIVMSG", []string{"a", ":x"}, true},
		{"A 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "A", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15 16"}, true},
	} {
		m, ok := parse(tc.in)
		if ok != tc.ok || m.cmd != tc.cmd || strings.Join(m.params, "|") != strings.Join(tc.params, "|") {
			t.Errorf("parse(%q) = %q %q %v", tc.in, m.cmd, m.params, ok)
		}
	}
	p := &testProtocol
	for n, want := range map[string]bool{"a": true, "[x]-1": true, "abcdefghi": true, "abcdefghij": false, "1a": false, "-a": false, "": false} {
		if p.validNick(n) != want {
			t.Errorf("validNick(%q) != %v", n, want)
		}
	}
}
