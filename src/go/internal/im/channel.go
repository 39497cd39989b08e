package im

import (
	"sync"
	"sync/atomic"
)

type opKind int

const (
	opJoin  opKind = iota // add c, echo its JOIN to every member, list the names to c
	opPart                // echo c's PART to every member, then remove c
	opMsg                 // deliver a PRIVMSG to every member but c (a cast: no reply)
	opPeers               // reply with the other members
	opLeave               // remove c, reply with the other members
)

type chanOp struct {
	kind  opKind
	c     *client
	line  []byte
	reply chan chanReply // nil for opMsg
}

// chanReply answers a call; lost: the channel was killed with the call in its
// mailbox, and the caller posts it again to the successor.
type chanReply struct {
	others []*client
	lost   bool
}

// channel is one channel's registry record; its goroutine (one incarnation at
// a time, mb naming the current one's mailbox) does the fan-out. The
// membership lives here, outside the goroutine, so a channel that chaos kills
// is restarted with its members, who are still connected.
type channel struct {
	name, key string
	mb        atomic.Pointer[mailbox[chanOp]]
	pending   atomic.Int64 // operations posted and not handled: it ends only at 0

	mu      sync.Mutex // the membership; held by the goroutine for a whole operation
	members map[*client]struct{}
	order   []*client // members in joining order, for the name list

	// guarded by channelRegistry.mu
	live int // index in channelRegistry.live
	gone bool
}

// channelRegistry maps each folded channel name to its record; live is the
// same set in a slice, for chaos's uniform choice.
type channelRegistry struct {
	mu   sync.Mutex
	m    map[string]*channel
	live []*channel
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
		ch = &channel{name: name, key: key, members: map[*client]struct{}{}, live: len(r.live)}
		r.m[key] = ch
		r.live = append(r.live, ch)
		srv.startChannel(ch)
	}
	ch.pending.Add(1) // counted under the lock: the JOIN about to be posted keeps it alive
	return ch
}

// startChannel starts an incarnation with a fresh mailbox: channelRegistry.mu held.
func (srv *Server) startChannel(ch *channel) {
	mb := newMailbox[chanOp]()
	ch.mb.Store(mb)
	go ch.run(srv, mb)
}

// post hands op to the current incarnation (its successor if it was just
// killed); false when the channel has ended.
func (ch *channel) post(op chanOp) bool {
	for {
		mb := ch.mb.Load()
		if mb.push(op) {
			return true
		}
		if ch.mb.Load() == mb {
			return false
		}
	}
}

// cast posts a PRIVMSG; a kill may lose it.
func (ch *channel) cast(op chanOp) {
	ch.pending.Add(1)
	if !ch.post(op) {
		ch.pending.Add(-1)
	}
}

func (ch *channel) run(srv *Server, mb *mailbox[chanOp]) {
	for {
		op, ok := mb.pop(srv.stopped)
		if !ok {
			return
		}
		ch.handle(srv, op)
		if ch.pending.Add(-1) == 0 {
			srv.channels.endIfIdle(ch)
		}
	}
}

// endIfIdle ends ch when it has no member and nothing pending; whichever
// incarnation handled the last operation asks (a killed one included).
func (r *channelRegistry) endIfIdle(ch *channel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch.mu.Lock()
	idle := len(ch.members) == 0
	ch.mu.Unlock()
	if ch.gone || !idle || ch.pending.Load() != 0 {
		return
	}
	ch.gone = true
	delete(r.m, ch.key)
	last := r.live[len(r.live)-1]
	r.live[ch.live], last.live = last, ch.live
	r.live[len(r.live)-1] = nil
	r.live = r.live[:len(r.live)-1]
	ch.mb.Load().close()
}

// killChannelLocked is chaos's act on a channel (channelRegistry.mu held): a
// fresh incarnation is named first, then the victim's mailbox is killed. What
// it held is discarded (counted): PRIVMSGs are lost; a call is answered "lost"
// so that its caller posts it again, as a caller whose gen_server died would.
func (srv *Server) killChannelLocked(ch *channel) {
	old := ch.mb.Load()
	srv.startChannel(ch)
	dropped := old.kill()
	for _, op := range dropped {
		if op.reply != nil {
			op.reply <- chanReply{lost: true}
		} else {
			ch.pending.Add(-1)
		}
	}
	srv.m.dropped.Add(int64(len(dropped)))
	srv.m.chansKilled.Add(1)
	srv.m.chansRestarted.Add(1)
}

// handle runs one operation; a fault in it is contained here, the channel
// keeping its members (the supervision a channel gets: its state survives).
func (ch *channel) handle(srv *Server, op chanOp) {
	var others []*client
	ch.mu.Lock()
	defer func() {
		recover()
		ch.mu.Unlock()
		if op.reply != nil {
			op.reply <- chanReply{others: others}
		}
	}()
	switch op.kind {
	case opJoin:
		// a client being cleaned up joins nothing: its clean-up may have left
		// this channel before the JOIN it posted arrived
		if _, in := ch.members[op.c]; in || op.c.dead.Load() {
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
		others = make([]*client, 0, len(ch.order))
		for _, m := range ch.order {
			if m != op.c {
				others = append(others, m)
			}
		}
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
