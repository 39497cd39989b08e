package im

// This file: a connection's reader goroutine: lines in, commands run, and the
// cleanup when it ends.

import (
	"bufio"
	"net"
	"sync/atomic"
	"time"
)

const (
	readBufferBytes = 4096
	// how long the last lines (ERROR, a QUIT's reply) may take to leave
	closeGrace = time.Second
)

// identity is a registered client's names, published for the goroutines that
// read them (channels listing members, peers relaying NICK and QUIT).
type identity struct {
	nick, user, prefix string // prefix: nick!user@127.0.0.1
}

// client is one connection: its reader goroutine (serve) parses and handles
// each line, its writer goroutine drains the bounded send queue to the socket.
type client struct {
	srv        *Server
	conn       net.Conn
	id         atomic.Pointer[identity] // nil until registered
	registered atomic.Bool
	q          sendq
	writerDone chan struct{}

	// the reader goroutine's own
	nick, key, user string // key: the folded nick
	channels        map[string]*channel
	erred           bool // the line being handled was answered with an error numeric

	// guarded by srv.sessions.mu
	sessions map[*session]struct{}
	left     bool
}

func newClient(srv *Server, c net.Conn) *client {
	cl := &client{srv: srv, conn: c, writerDone: make(chan struct{}), channels: map[string]*channel{}, sessions: map[*session]struct{}{}}
	cl.q.limit, cl.q.wake = srv.cfg.SendqLines, make(chan struct{}, 1)
	return cl
}

// serve runs the connection until it ends, then takes the client out of every
// registry and lets the writer flush what is queued.
func (c *client) serve() {
	go c.writeLoop()
	reason := c.readLoop()
	c.leave(reason)
	c.q.close()
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
