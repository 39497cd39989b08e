package im

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
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

// sendq is the bounded outgoing queue: lines wait here for the writer.
type sendq struct {
	mu           sync.Mutex
	lines, spare [][]byte
	limit        int
	over, closed bool
	wake         chan struct{}
}

// send queues line for this client; a full queue disconnects it (counted once).
func (c *client) send(line []byte) {
	q := &c.q
	q.mu.Lock()
	if q.over || q.closed {
		q.mu.Unlock()
		return
	}
	if len(q.lines) >= q.limit {
		q.over, q.lines = true, nil
		q.mu.Unlock()
		c.srv.m.sendqDisconnects.Add(1)
		_ = c.conn.SetWriteDeadline(time.Now()) // a write blocked on a client that does not read returns
	} else {
		q.lines = append(q.lines, line)
		q.mu.Unlock()
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for lines, then hands them all to the writer.
func (q *sendq) take() (lines [][]byte, closed, over bool) {
	for {
		q.mu.Lock()
		if q.over || len(q.lines) > 0 || q.closed {
			lines, closed, over = q.lines, q.closed, q.over
			q.lines, q.spare = q.spare, nil
			q.mu.Unlock()
			return lines, closed, over
		}
		q.mu.Unlock()
		<-q.wake
	}
}

func (q *sendq) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued lines in batches (one writev each) until the queue
// is closed and empty, a write fails, or the queue overflowed.
func (c *client) writeLoop() {
	defer close(c.writerDone)
	midLine := false     // a write cut short left part of a line on the wire
	var bufs net.Buffers // WriteTo consumes it, so lines keep their lengths
	for {
		lines, closed, over := c.q.take()
		if !over && len(lines) > 0 {
			bufs = append(bufs[:0], lines...)
			n, err := bufs.WriteTo(c.conn)
			midLine = err != nil && cutsLine(lines, n)
			for i := range lines {
				lines[i] = nil
			}
			bufs = bufs[:0]
			c.q.mu.Lock()
			c.q.spare, over = lines[:0], c.q.over
			c.q.mu.Unlock()
			if err != nil && !over {
				if isConnFault(err) {
					c.srv.m.connErrors.Add(1)
				}
				_ = c.conn.Close()
				return
			}
		}
		if over {
			_ = c.conn.SetWriteDeadline(time.Now().Add(closeGrace))
			msg := "ERROR :SendQ exceeded\r\n"
			if midLine {
				msg = "\r\n" + msg
			}
			_, _ = io.WriteString(c.conn, msg)
			_ = c.conn.Close()
			return
		}
		if closed {
			return
		}
	}
}

// cutsLine: whether n bytes of lines end inside a line.
func cutsLine(lines [][]byte, n int64) bool {
	for _, l := range lines {
		if n < int64(len(l)) {
			return n > 0
		}
		n -= int64(len(l))
	}
	return false
}

// isConnFault: a failed read or write that is the connection's fault; a clean
// close by the peer is not, nor the server's own close.
func isConnFault(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF)
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

func (q *sendq) isOver() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.over
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

// preRegistration: the commands a client may send before it is registered;
// any other line gets 451.
var preRegistration = map[string]bool{"": true, "NICK": true, "USER": true, "QUIT": true, "PONG": true}

// handle runs one command; quit is true after QUIT.
func (c *client) handle(line string) (quit bool, reason string) {
	m, ok := parse(line)
	if !ok { // a prefix alone: ignored, as an empty line
		return false, ""
	}
	if !c.registered.Load() && !preRegistration[m.cmd] {
		c.numeric(451, "You have not registered")
		return false, ""
	}
	switch m.cmd {
	case "":
	case "NICK":
		c.cmdNick(m.params)
	case "USER":
		c.cmdUser(m.params)
	case "PONG":
	case "QUIT":
		reason = "Client Quit"
		if len(m.params) > 0 && m.params[0] != "" {
			reason = m.params[0]
		}
		c.send([]byte("ERROR :Closing Link\r\n"))
		return true, reason
	case "PING":
		if len(m.params) == 0 {
			c.numeric(409, "No origin specified")
		} else {
			name := c.srv.cfg.Protocol.ServerName
			c.send(fromUser(name, "PONG", []string{name}, m.params[0], true))
		}
	case "PRIVMSG":
		c.cmdPrivmsg(m.params)
	case "JOIN":
		c.cmdJoin(m.params)
	case "PART":
		c.cmdPart(m.params)
	default:
		c.numeric(421, m.cmd, "Unknown command")
	}
	return false, ""
}

func (c *client) cmdNick(p []string) {
	if len(p) == 0 || p[0] == "" {
		c.numeric(431, "No nickname given")
		return
	}
	nick := p[0]
	if !c.srv.cfg.Protocol.validNick(nick) {
		c.numeric(432, nick, "Erroneous nickname")
		return
	}
	key := fold(nick)
	if !c.srv.nicks.claim(key, c.key, c) {
		c.numeric(433, nick, "Nickname is already in use")
		return
	}
	old := c.id.Load()
	if old == nil { // not registered yet
		c.nick, c.key = nick, key
		c.tryRegister()
		return
	}
	if key != c.key {
		c.srv.sessions.leave(c, false) // they are keyed by the old nick
	}
	c.nick, c.key = nick, key
	c.id.Store(&identity{nick: nick, user: c.user, prefix: nick + "!" + c.user + "@" + ClientHost})
	line := fromUser(old.prefix, "NICK", nil, nick, true)
	c.send(line)
	for _, peer := range c.peers(false) {
		peer.send(line)
	}
}

func (c *client) cmdUser(p []string) {
	if c.registered.Load() {
		c.numeric(462, "You may not reregister")
		return
	}
	if len(p) < 4 {
		c.numeric(461, "USER", "Not enough parameters")
		return
	}
	c.user = p[0]
	c.tryRegister()
}

func (c *client) tryRegister() {
	if c.nick == "" || c.user == "" {
		return
	}
	id := &identity{nick: c.nick, user: c.user, prefix: c.nick + "!" + c.user + "@" + ClientHost}
	c.id.Store(id)
	c.registered.Store(true)
	c.srv.registeredOne()
	c.numeric(1, "Welcome to the serverbench IRC network "+id.prefix)
}

func (c *client) cmdPrivmsg(p []string) {
	if len(p) == 0 || p[0] == "" {
		c.numeric(411, "No recipient given (PRIVMSG)")
		return
	}
	if len(p) < 2 || p[1] == "" {
		c.numeric(412, "No text to send")
		return
	}
	id, text := c.id.Load(), p[1]
	for _, t := range strings.Split(p[0], ",") {
		key := fold(t)
		if strings.HasPrefix(t, "#") {
			if ch, member := c.channels[key]; member {
				ch.post(c.srv, chanOp{kind: opMsg, c: c, line: fromUser(id.prefix, "PRIVMSG", []string{ch.name}, text, true)})
			} else if c.srv.channelFor(key, "", false) != nil {
				c.numeric(404, t, "Cannot send to channel")
			} else {
				c.numeric(403, t, "No such channel")
			}
			continue
		}
		to := c.srv.nicks.lookup(key)
		var toID *identity
		if to != nil {
			toID = to.id.Load()
		}
		if toID == nil || !c.srv.route(c, to, c.key, key, fromUser(id.prefix, "PRIVMSG", []string{toID.nick}, text, true)) {
			c.numeric(401, t, "No such nick/channel")
		}
	}
}

func (c *client) cmdJoin(p []string) {
	if len(p) == 0 || p[0] == "" {
		c.numeric(461, "JOIN", "Not enough parameters")
		return
	}
	for _, name := range strings.Split(p[0], ",") {
		if !c.srv.cfg.Protocol.validChannel(name) {
			c.numeric(403, name, "No such channel")
			continue
		}
		key := fold(name)
		if _, member := c.channels[key]; member {
			continue
		}
		ch := c.srv.channelFor(key, name, true)
		c.channels[key] = ch
		c.call(ch, chanOp{kind: opJoin, c: c, line: fromUser(c.id.Load().prefix, "JOIN", []string{ch.name}, "", false)})
	}
}

func (c *client) cmdPart(p []string) {
	if len(p) == 0 || p[0] == "" {
		c.numeric(461, "PART", "Not enough parameters")
		return
	}
	for _, name := range strings.Split(p[0], ",") {
		key := fold(name)
		ch, member := c.channels[key]
		if !member {
			if c.srv.channelFor(key, "", false) != nil {
				c.numeric(442, name, "You're not on that channel")
			} else {
				c.numeric(403, name, "No such channel")
			}
			continue
		}
		delete(c.channels, key)
		c.call(ch, chanOp{kind: opPart, c: c, line: fromUser(c.id.Load().prefix, "PART", []string{ch.name}, argOr(p, 1), len(p) > 1)})
	}
}

func argOr(p []string, i int) string {
	if i < len(p) {
		return p[i]
	}
	return ""
}

// call posts op and waits for the channel's reply: a JOIN's or PART's echo
// and names then reach c before the replies to its next lines.
func (c *client) call(ch *channel, op chanOp) []*client {
	op.reply = make(chan []*client, 1)
	if !ch.post(c.srv, op) {
		return nil
	}
	select {
	case r := <-op.reply:
		return r
	case <-c.srv.stopped:
		return nil
	}
}

// peers asks each of c's channels for its other members, each once; with
// leaving, c also leaves them.
func (c *client) peers(leaving bool) []*client {
	kind := opPeers
	if leaving {
		kind = opLeave
	}
	seen := map[*client]struct{}{}
	var out []*client
	for key, ch := range c.channels {
		for _, m := range c.call(ch, chanOp{kind: kind, c: c}) {
			if _, dup := seen[m]; !dup && m != c {
				seen[m] = struct{}{}
				out = append(out, m)
			}
		}
		if leaving {
			delete(c.channels, key)
		}
	}
	return out
}

// leave takes a closing connection out of its sessions, channels (relaying
// its QUIT to their members) and the nick registry.
func (c *client) leave(reason string) {
	c.srv.sessions.leave(c, true)
	if id := c.id.Load(); id != nil {
		line := fromUser(id.prefix, "QUIT", nil, reason, true)
		for _, peer := range c.peers(true) {
			peer.send(line)
		}
		c.srv.registeredNow.Add(-1)
	}
	if c.key != "" {
		c.srv.nicks.release(c.key, c)
	}
}
