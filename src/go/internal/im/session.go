package im

import (
	"sync"
	"sync/atomic"
)

// pairKey is the unordered pair of folded nicks of a conversation: lo <= hi.
type pairKey struct{ lo, hi string }

func pairOf(a, b string) pairKey {
	if b < a {
		a, b = b, a
	}
	return pairKey{a, b}
}

// routed is one PRIVMSG on its way through a session: the line to deliver and
// the client to deliver it to.
type routed struct {
	to   *client
	line []byte
}

// session serves one conversation. Each incarnation is a goroutine with its
// own unbounded mailbox; the registry entry (mb) always names the current one,
// so a kill swaps it for a fresh incarnation's at once (kill, below).
type session struct {
	key   pairKey
	peers [2]*client
	mb    atomic.Pointer[mailbox[routed]]
	// guarded by sessionRegistry.mu:
	ended bool
	live  int // index in sessionRegistry.live
}

// run is one incarnation: forward each PRIVMSG to its receiver until its
// mailbox is killed or closed. A panic ends the incarnation only: the
// supervision restarts the session with a fresh mailbox.
func (s *session) run(srv *Server, mb *mailbox[routed]) {
	defer func() {
		if recover() != nil {
			srv.sessions.mu.Lock()
			if !s.ended && s.mb.Load() == mb {
				mb.kill()
				srv.startIncarnation(s)
				srv.m.restarted.Add(1)
			}
			srv.sessions.mu.Unlock()
		}
	}()
	for {
		r, ok := mb.pop(srv.stopped)
		if !ok {
			return
		}
		r.to.send(r.line)
		srv.m.routed.Add(1)
	}
}

// post puts r in the current incarnation's mailbox. A push refused by a mailbox
// killed meanwhile goes to the successor, already in place; one refused by a
// session that ended is lost (its client left).
func (s *session) post(r routed) {
	for {
		mb := s.mb.Load()
		if mb.push(r) || s.mb.Load() == mb {
			return
		}
	}
}

// sessionRegistry finds a conversation's session by its nick pair and keeps
// the live sessions in a slice for the chaos monkey's uniform choice.
type sessionRegistry struct {
	mu   sync.Mutex
	m    map[pairKey]*session
	live []*session
}

// route sends line from one client to another through their session, starting
// it on their first message; false when either has left (a message the chaos
// monkey's kill loses is not the sender's error).
func (srv *Server) route(from, to *client, fromKey, toKey string, line []byte) bool {
	r := &srv.sessions
	key := pairOf(fromKey, toKey)
	r.mu.Lock()
	s := r.m[key]
	if s == nil || s.peers[0] != from && s.peers[1] != from || s.peers[0] != to && s.peers[1] != to {
		if s != nil { // the pair's nicks now belong to other clients
			r.endLocked(s)
		}
		if from.left || to.left {
			r.mu.Unlock()
			return false
		}
		s = &session{key: key, peers: [2]*client{from, to}, live: len(r.live)}
		r.m[key] = s
		r.live = append(r.live, s)
		from.sessions[s] = struct{}{}
		to.sessions[s] = struct{}{}
		srv.m.started.Add(1)
		srv.startIncarnation(s)
	}
	r.mu.Unlock()
	s.post(routed{to: to, line: line})
	return true
}

// startIncarnation: called with sessionRegistry.mu held.
func (srv *Server) startIncarnation(s *session) {
	mb := newMailbox[routed]()
	s.mb.Store(mb)
	go s.run(srv, mb)
}

// killSessionLocked is chaos's act on a session (mu held): the registry names
// a fresh incarnation first, so new messages go to it; then the victim's
// mailbox is killed, which discards what it held (counted) and makes the
// victim's next pop fail: it handles nothing after the message in hand.
func (srv *Server) killSessionLocked(s *session) {
	old := s.mb.Load()
	srv.startIncarnation(s)
	srv.m.dropped.Add(int64(len(old.kill())))
	srv.m.killed.Add(1)
	srv.m.restarted.Add(1)
}

// endLocked ends s for good (no restart): called with mu held. Its mailbox is
// closed, not killed: what the peers already sent is still delivered.
func (r *sessionRegistry) endLocked(s *session) {
	if s.ended {
		return
	}
	s.ended = true
	if r.m[s.key] == s {
		delete(r.m, s.key)
	}
	last := r.live[len(r.live)-1]
	r.live[s.live], last.live = last, s.live
	r.live[len(r.live)-1] = nil
	r.live = r.live[:len(r.live)-1]
	for _, p := range s.peers {
		delete(p.sessions, s)
	}
	s.mb.Load().close()
}

// leave ends every session of c (it quit, or changed its nick, which keys
// them); with gone, c takes part in no new session either.
func (r *sessionRegistry) leave(c *client, gone bool) {
	r.mu.Lock()
	if gone {
		c.left = true
	}
	for s := range c.sessions {
		r.endLocked(s)
	}
	r.mu.Unlock()
}
