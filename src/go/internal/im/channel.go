package im

import (
	"sync"
	"sync/atomic"
)

// channelMailbox bounds a channel's mailbox; a sender waits while it is full.
const channelMailbox = 256

type opKind int

const (
	opJoin  opKind = iota // add c, echo its JOIN to every member, list the names to c; reply nil
	opPart                // echo c's PART to every member, then remove c; reply nil
	opMsg                 // deliver a PRIVMSG to every member but c
	opPeers               // reply with the other members
	opLeave               // remove c, reply with the other members
)

type chanOp struct {
	kind  opKind
	c     *client
	line  []byte
	reply chan []*client
}

// channel is one channel's goroutine: it alone holds the member set and does
// the fan-out. It ends when it has no member and nothing in its mailbox.
type channel struct {
	name, key string
	mailbox   chan chanOp
	members   map[*client]struct{}
	order     []*client // members in joining order, for the name list
	pending   atomic.Int64
}

// channelRegistry maps each folded channel name to its goroutine.
type channelRegistry struct {
	mu sync.Mutex
	m  map[string]*channel
}

// channelFor finds the channel, nil if none; with create (for a JOIN, which
// must then be posted) it creates a missing one, name being its shown name.
func (srv *Server) channelFor(key, name string, create bool) *channel {
	r := &srv.channels
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.m[key]
	if !create {
		return ch
	}
	if ch == nil {
		ch = &channel{name: name, key: key, mailbox: make(chan chanOp, channelMailbox), members: map[*client]struct{}{}}
		r.m[key] = ch
		go ch.run(srv)
	}
	ch.pending.Add(1) // counted under the lock: the JOIN about to be posted keeps it alive
	return ch
}

// post hands op to the channel, waiting while its mailbox is full; false when
// the server stopped first.
func (ch *channel) post(srv *Server, op chanOp) bool {
	if op.kind != opJoin { // a JOIN was counted by channelFor; the others come from members
		ch.pending.Add(1)
	}
	select {
	case ch.mailbox <- op:
		return true
	case <-srv.stopped:
		return false
	}
}

func (ch *channel) run(srv *Server) {
	for {
		select {
		case op := <-ch.mailbox:
			ch.handle(srv, op)
			if ch.pending.Add(-1) == 0 && len(ch.members) == 0 {
				srv.channels.mu.Lock()
				if ch.pending.Load() == 0 { // no one found it meanwhile
					delete(srv.channels.m, ch.key)
					srv.channels.mu.Unlock()
					return
				}
				srv.channels.mu.Unlock()
			}
		case <-srv.stopped:
			return
		}
	}
}

// handle runs one operation; a fault in it is contained here, the channel
// keeping its members (the supervision a channel gets: its state survives).
func (ch *channel) handle(srv *Server, op chanOp) {
	defer func() {
		if recover() != nil && op.kind >= opPeers {
			op.reply <- nil
		}
	}()
	if op.kind == opJoin || op.kind == opPart {
		defer func() { op.reply <- nil }()
	}
	switch op.kind {
	case opJoin:
		if _, in := ch.members[op.c]; in {
			return
		}
		ch.members[op.c] = struct{}{}
		ch.order = append(ch.order, op.c)
		for _, m := range ch.order {
			m.send(op.line)
		}
		ch.names(&srv.cfg.Protocol, op.c)
	case opPart:
		if _, in := ch.members[op.c]; !in {
			return
		}
		for _, m := range ch.order {
			m.send(op.line)
		}
		ch.remove(op.c)
	case opMsg:
		n := int64(0)
		for _, m := range ch.order {
			if m != op.c {
				m.send(op.line)
				n++
			}
		}
		srv.m.chanDeliveries.Add(n)
	case opPeers, opLeave:
		if op.kind == opLeave {
			ch.remove(op.c)
		}
		others := make([]*client, 0, len(ch.order))
		for _, m := range ch.order {
			if m != op.c {
				others = append(others, m)
			}
		}
		op.reply <- others
	}
}

func (ch *channel) remove(c *client) {
	if _, in := ch.members[c]; !in {
		return
	}
	delete(ch.members, c)
	for i, m := range ch.order {
		if m == c {
			ch.order = append(ch.order[:i], ch.order[i+1:]...)
			break
		}
	}
}

// names sends the member list (353, split to fit a line) and 366 to c.
func (ch *channel) names(p *Protocol, c *client) {
	nick := c.id.Load().nick
	head := len(p.ServerName) + len(nick) + len(ch.name) + 16 // ":server 353 nick = #chan :" and CRLF
	list := make([]byte, 0, 256)
	flush := func() {
		c.send(p.numeric(353, nick, "=", ch.name, string(list)))
		list = list[:0]
	}
	for _, m := range ch.order {
		n := m.id.Load().nick
		if len(list) > 0 && head+len(list)+1+len(n) > p.LineMaxBytes {
			flush()
		}
		if len(list) > 0 {
			list = append(list, ' ')
		}
		list = append(list, n...)
	}
	if len(list) > 0 {
		flush()
	}
	c.send(p.numeric(366, nick, ch.name, "End of NAMES list"))
}
