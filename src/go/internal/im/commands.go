package im

// This file: the commands of the subset, run by the connection's reader
// goroutine.

import "strings"

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
