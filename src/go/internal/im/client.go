package im

// This file: a connection's reader goroutine (lines in, commands run), and its
// end: the clean-up, run by the linked writer goroutine (sendq.go) however the
// reader ended (returned, crashed, or killed by chaos).

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	readBufferBytes = 4096
	// how long the last lines (ERROR, a QUIT's reply) may take to leave
	closeGrace = time.Second
)

// testCrashCommand, when set (tests only), makes the reader goroutine panic on
// that command: the way to crash a connection process and check its clean-up.
var testCrashCommand atomic.Pointer[string]

// identity is a registered client's names, published for the goroutines that
// read them (channels listing members, peers relaying NICK and QUIT).
type identity struct {
	nick, user, prefix string // prefix: nick!user@127.0.0.1
}

// registration states (client.reg)
const (
	regNone int32 = iota
	regDone
	regClosed // cleaned up: counted out of registeredNow once
)

// client is one connection: its reader goroutine (serve) parses and handles
// each line, its writer goroutine drains the send queue to the socket and,
// once the connection has ended, cleans up.
type client struct {
	srv        *Server
	conn       net.Conn
	id         atomic.Pointer[identity] // nil until registered
	reg        atomic.Int32
	q          sendq
	writerDone chan struct{}
	dead       atomic.Bool // cleaning up: joins no channel from now on
	killed     atomic.Bool // chaos killed it: the reader takes no further line
	cleanOnce  sync.Once

	// the reader goroutine's own
	nick, key, user string // key: the folded nick
	erred           bool   // the line being handled was answered with an error numeric

	mu       sync.Mutex // channels: the reader adds and removes, the clean-up takes all
	channels map[string]*channel

	// guarded by srv.sessions.mu
	sessions map[*session]struct{}
	left     bool
	// guarded by srv.nicks.mu
	nickKey   string
	nickFreed bool
	// guarded by srv.conns.mu
	live int
}

func newClient(srv *Server, c net.Conn) *client {
	cl := &client{srv: srv, conn: c, writerDone: make(chan struct{}), channels: map[string]*channel{}, sessions: map[*session]struct{}{}, live: -1}
	cl.q.limit, cl.q.wake = srv.cfg.SendqLines, make(chan struct{}, 1)
	return cl
}

// serve runs the connection until it ends. The reader's own end (or crash) only
// closes the send queue; the writer flushes it and then cleans up.
func (c *client) serve() {
	c.srv.conns.add(c)
	go c.writeLoop()
	reason := "Connection closed"
	func() {
		defer func() {
			if recover() != nil { // contained: the clean-up runs as for any other end
				reason = "Connection crashed"
			}
		}()
		reason = c.readLoop()
	}()
	c.q.close(reason)
	_ = c.conn.SetWriteDeadline(time.Now().Add(closeGrace))
	<-c.writerDone
}

// readLoop reads lines of at most LineMaxBytes (CRLF or a bare LF ends one);
// it returns the QUIT reason to relay.
func (c *client) readLoop() string {
	r := bufio.NewReaderSize(c.conn, readBufferBytes)
	discarding := false // inside a line already too long
	for {
		line, err := r.ReadSlice('\n')
		// the connection's message boundary: once killed, not one more line
		// (bufio may hold lines the socket's close cannot take back)
		if c.killed.Load() {
			return "Killed"
		}
		if err == bufio.ErrBufferFull {
			discarding = true
			continue
		}
		if err != nil {
			if isConnFault(err) && !c.q.isOver() {
				c.srv.m.connErrors.Add(1)
			}
			if c.q.isOver() {
				return "SendQ exceeded"
			}
			return "Connection closed"
		}
		body := line[:len(line)-1]
		if n := len(body); n > 0 && body[n-1] == '\r' {
			body = body[:n-1]
		}
		c.erred = false
		if discarding || len(body)+2 > c.srv.cfg.Protocol.LineMaxBytes {
			discarding = false
			c.numeric(417, "Input line was too long")
		} else if quit, reason := c.handle(string(body)); quit {
			return reason
		}
		if c.erred {
			c.srv.m.badLines.Add(1)
		}
	}
}

// target is the nick numerics are addressed to: "*" before NICK.
func (c *client) target() string {
	if c.nick == "" {
		return "*"
	}
	return c.nick
}

func (c *client) numeric(code int, params ...string) {
	c.erred = c.erred || code >= 400
	c.send(c.srv.cfg.Protocol.numeric(code, c.target(), params...))
}

// killConnLocked is chaos's act on a connection (srv.conns.mu held): out of
// the registry and its nick freed at once, its send queue discarded (counted),
// its socket closed (the client sees end of file); the reader takes no further
// line, and the writer, woken, cleans up (channels, sessions, QUIT relay).
func (srv *Server) killConnLocked(c *client) {
	if !srv.conns.removeLocked(c) {
		return
	}
	c.killed.Store(true)
	srv.nicks.release(c)
	srv.m.dropped.Add(int64(c.q.kill()))
	if tc, ok := c.conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite() // a FIN first: the peer reads end of file, not only a reset
	}
	_ = c.conn.Close()
	srv.m.connsKilled.Add(1)
}

// cleanup takes an ended connection out of every registry: its nick first (free
// at once), its sessions, its channels (relaying its QUIT to their members).
// Run once, by the writer goroutine, whatever ended the reader.
func (c *client) cleanup(reason string) {
	c.cleanOnce.Do(func() {
		c.dead.Store(true)
		c.srv.conns.remove(c)
		c.srv.nicks.release(c)
		c.srv.sessions.leave(c, true)
		c.mu.Lock()
		chans := c.channels
		c.channels = map[string]*channel{}
		c.mu.Unlock()
		peers := c.peersOf(chans, opLeave)
		if c.reg.Swap(regClosed) == regDone {
			line := fromUser(c.id.Load().prefix, "QUIT", nil, reason, true)
			for _, peer := range peers {
				peer.send(line)
			}
			c.srv.registeredNow.Add(-1)
		}
	})
}

// call posts op and waits for the channel's reply, posting it again to the
// successor when a kill lost it: a JOIN's or PART's echo and names then reach
// c before the replies to its next lines.
func (c *client) call(ch *channel, op chanOp) []*client {
	for {
		op.reply = make(chan chanReply, 1)
		if !ch.post(op) {
			return nil
		}
		select {
		case r := <-op.reply:
			if !r.lost {
				return r.others
			}
		case <-c.srv.stopped:
			return nil
		}
	}
}

// peersOf asks each channel of chans for its other members, each once (kind:
// opPeers, or opLeave to leave them too).
func (c *client) peersOf(chans map[string]*channel, kind opKind) []*client {
	seen := map[*client]struct{}{}
	var out []*client
	for _, ch := range chans {
		ch.pending.Add(1)
		for _, m := range c.call(ch, chanOp{kind: kind, c: c}) {
			if _, dup := seen[m]; !dup && m != c {
				seen[m] = struct{}{}
				out = append(out, m)
			}
		}
	}
	return out
}
