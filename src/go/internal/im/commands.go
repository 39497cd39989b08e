package im

// This file: the commands of the subset, run by the connection's reader
// goroutine.

import (
	"runtime"
	"strconv"
	"strings"
)

// preRegistration: the commands a client may send before it is registered;
// any other line gets 451.
var preRegistration = map[string]bool{"": true, "NICK": true, "USER": true, "QUIT": true, "PONG": true}

// handle runs one command; quit is true after QUIT.
func (c *client) handle(line string) (quit bool, reason string) {
	m, ok := parse(line)
	if !ok { // a prefix alone: ignored, as an empty line
		return false, ""
	}
	if t := testCrashCommand.Load(); t != nil && m.cmd == *t {
		panic("test: the connection process crashes")
	}
	if c.reg.Load() != regDone && !preRegistration[m.cmd] {
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
	case "MEMORY":
		c.cmdMemory()
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
	if !c.srv.nicks.claim(key, c) {
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
	for _, peer := range c.peersOf(c.channelSet(), opPeers) {
		peer.send(line)
	}
}

func (c *client) cmdUser(p []string) {
	if c.reg.Load() != regNone {
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
	if !c.reg.CompareAndSwap(regNone, regDone) { // cleaned up meanwhile (killed)
		return
	}
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
			c.mu.Lock()
			ch, member := c.channels[key]
			c.mu.Unlock()
			if member {
				ch.cast(chanOp{kind: opMsg, c: c, line: fromUser(id.prefix, "PRIVMSG", []string{ch.name}, text, true)})
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
		c.mu.Lock()
		_, member := c.channels[key]
		if member || c.dead.Load() { // a dead client joins nothing: its clean-up took its channels
			c.mu.Unlock()
			continue
		}
		ch := c.srv.channelFor(key, name, true)
		c.channels[key] = ch
		c.mu.Unlock()
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
		c.mu.Lock()
		ch, member := c.channels[key]
		delete(c.channels, key)
		c.mu.Unlock()
		if !member {
			if c.srv.channelFor(key, "", false) != nil {
				c.numeric(442, name, "You're not on that channel")
			} else {
				c.numeric(403, name, "No such channel")
			}
			continue
		}
		ch.pending.Add(1)
		c.call(ch, chanOp{kind: opPart, c: c, line: fromUser(c.id.Load().prefix, "PART", []string{ch.name}, argOr(p, 1), len(p) > 1)})
	}
}

func argOr(p []string, i int) string {
	if i < len(p) {
		return p[i]
	}
	return ""
}

// channelSet is a copy of c's channels.
func (c *client) channelSet() map[string]*channel {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*channel, len(c.channels))
	for k, ch := range c.channels {
		out[k] = ch
	}
	return out
}

// cmdMemory answers MEMORY (outside RFC 2812, for measurement): a full
// collection, then the live heap and the goroutine stacks in use.
func (c *client) cmdMemory() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	n := int64(ms.HeapAlloc + ms.StackInuse)
	c.srv.liveBytes.Store(n)
	name := c.srv.cfg.Protocol.ServerName
	c.send(fromUser(name, "NOTICE", []string{c.nick}, "live_bytes "+strconv.FormatInt(n, 10), true))
}
