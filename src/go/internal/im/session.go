package im

import (
	"math/rand"
	"sync"
	"sync/atomic"
	"time"
)

// sessionMailbox bounds a session's mailbox; a sender waits while it is full.
const sessionMailbox = 256

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
// own mailbox: a kill ends the goroutine and abandons what its mailbox holds,
// and the supervisor starts the next incarnation.
type session struct {
	key   pairKey
	peers [2]*client
	inc   atomic.Pointer[incarnation]
	// guarded by sessionRegistry.mu:
	ended bool
	live  int // index in sessionRegistry.live
}

type incarnation struct {
	mailbox chan routed
	kill    chan struct{}
	once    sync.Once
}

func (i *incarnation) end() { i.once.Do(func() { close(i.kill) }) }

func (i *incarnation) ended() bool {
	select {
	case <-i.kill:
		return true
	default:
		return false
	}
}

// run is one incarnation: forward each PRIVMSG to its receiver until killed
// or ended, then tell the supervisor.
func (s *session) run(srv *Server, inc *incarnation) {
	for {
		select {
		case r := <-inc.mailbox:
			if !inc.ended() { // a select with both ready picks at random: a killed one delivers nothing more
				r.to.send(r.line)
				srv.m.routed.Add(1)
				continue
			}
		case <-inc.kill:
		case <-srv.stopped:
			return
		}
		select { // killed: what the mailbox still holds is lost
		case srv.sup.exits <- s:
		case <-srv.stopped:
		}
		return
	}
}

// post puts r in the session's mailbox, waiting while it is full; false when
// the incarnation it found was killed first (the message is lost, as messages
// in a killed process's mailbox are).
func (s *session) post(r routed, stopped <-chan struct{}) bool {
	inc := s.inc.Load()
	if inc.ended() {
		return false
	}
	select {
	case inc.mailbox <- r:
		return true
	case <-inc.kill:
		return false
	case <-stopped:
		return false
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
	s.post(routed{to: to, line: line}, srv.stopped) // lost if the session was just killed, as in a crash
	return true
}

// startIncarnation: called with sessionRegistry.mu held.
func (srv *Server) startIncarnation(s *session) {
	inc := &incarnation{mailbox: make(chan routed, sessionMailbox), kill: make(chan struct{})}
	s.inc.Store(inc)
	go s.run(srv, inc)
}

// endLocked ends s for good (no restart): called with mu held.
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
	r.live = r.live[:len(r.live)-1]
	for _, p := range s.peers {
		delete(p.sessions, s)
	}
	s.inc.Load().end()
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

// supervisor restarts killed sessions and, when chaos is on, kills a random
// live session every interval.
type supervisor struct {
	srv   *Server
	exits chan *session
	done  chan struct{}
}

func newSupervisor(srv *Server) *supervisor {
	return &supervisor{srv: srv, exits: make(chan *session, 64), done: make(chan struct{})}
}

func (sup *supervisor) run() {
	defer close(sup.done)
	srv := sup.srv
	var chaos <-chan time.Time
	rng := rand.New(rand.NewSource(srv.cfg.Seed))
	if srv.cfg.ChaosInterval > 0 {
		t := time.NewTicker(srv.cfg.ChaosInterval)
		defer t.Stop()
		chaos = t.C
	}
	for {
		select {
		case s := <-sup.exits: // an incarnation ended: restart it unless the session did
			srv.sessions.mu.Lock()
			if !s.ended {
				srv.startIncarnation(s)
				srv.m.restarted.Add(1)
			}
			srv.sessions.mu.Unlock()
		case <-chaos:
			srv.sessions.mu.Lock()
			if n := len(srv.sessions.live); n > 0 {
				// one already killed and not yet restarted is not killed twice
				if inc := srv.sessions.live[rng.Intn(n)].inc.Load(); !inc.ended() {
					inc.end()
					srv.m.killed.Add(1)
				}
			}
			srv.sessions.mu.Unlock()
		case <-srv.stopped:
			return
		}
	}
}
