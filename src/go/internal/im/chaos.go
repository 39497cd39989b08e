package im

// This file: the chaos monkey. Every ChaosInterval it kills one live process
// of ChaosTarget (session, channel, connection, or any of them uniformly),
// picked at random among all of them, or ("queued") among those whose mailbox
// holds something at that moment (at random among all when none does) and held
// until the next tick: still registered, it takes nothing off its mailbox, so
// what is sent to it meanwhile is there for the kill to discard (a server that
// keeps up has no queue to lose otherwise). The kills themselves are
// killSessionLocked, killChannelLocked, killConnLocked.

import (
	"math/rand"
	"time"
)

// supervisor runs the chaos monkey; the restarts it asks for are immediate
// (the kill installs the successor), and the restart after a crash is the
// crashed incarnation's deferred hand-over (session.run).
type supervisor struct {
	srv  *Server
	done chan struct{}
}

func newSupervisor(srv *Server) *supervisor {
	return &supervisor{srv: srv, done: make(chan struct{})}
}

func (sup *supervisor) run() {
	defer close(sup.done)
	srv := sup.srv
	if srv.cfg.ChaosInterval <= 0 {
		<-srv.stopped
		return
	}
	rng := rand.New(rand.NewSource(srv.cfg.Seed))
	t := time.NewTicker(srv.cfg.ChaosInterval)
	defer t.Stop()
	var held *victim
	for {
		select {
		case <-t.C:
			held = srv.strike(rng, held)
		case <-srv.stopped:
			if held != nil { // a held connection's writer waits for nothing else
				held.box.setHeld(false)
			}
			return
		}
	}
}

// victim is one drawn process: a session, a channel or a connection, and the
// queue a hold stops (its mailbox; a connection's send queue).
type victim struct {
	s   *session
	ch  *channel
	c   *client
	box interface{ setHeld(bool) }
}

// kinds: which registries chaos draws from.
func (srv *Server) kinds() (sessions, channels, conns bool) {
	switch srv.cfg.ChaosTarget {
	case "channel":
		return false, true, false
	case "connection":
		return false, false, true
	case "any":
		return true, true, true
	}
	return true, false, false
}

// strike kills one victim: under pick random one drawn now; under pick queued
// the one drawn and held at the last tick, and draws and holds the next.
func (srv *Server) strike(rng *rand.Rand, held *victim) *victim {
	queued := srv.cfg.ChaosPick == "queued"
	if !queued {
		if v := srv.draw(rng, false); v != nil {
			srv.kill(v)
		}
		return nil
	}
	if held != nil {
		srv.kill(held)
		held.box.setHeld(false) // one that ended meanwhile goes on (a killed one is gone)
	}
	v := srv.draw(rng, true)
	if v != nil {
		v.box.setHeld(true)
	}
	return v
}

// kill kills v under its registry's lock if it is still live then.
func (srv *Server) kill(v *victim) {
	switch {
	case v.s != nil:
		srv.sessions.mu.Lock()
		if !v.s.ended {
			srv.killSessionLocked(v.s)
		}
		srv.sessions.mu.Unlock()
	case v.ch != nil:
		srv.channels.mu.Lock()
		if !v.ch.gone {
			srv.killChannelLocked(v.ch)
		}
		srv.channels.mu.Unlock()
	default:
		srv.conns.mu.Lock()
		srv.killConnLocked(v.c) // a no-op if it has left
		srv.conns.mu.Unlock()
	}
}

// draw picks a victim (nil when there is none): with queued, among those whose
// mailbox holds something if any does; else uniformly among all. Each
// registry is read under its own lock.
func (srv *Server) draw(rng *rand.Rand, queued bool) *victim {
	ks, kc, kn := srv.kinds()
	if queued {
		var vs []*victim
		if ks {
			srv.sessions.mu.Lock()
			for _, s := range srv.sessions.live {
				if mb := s.mb.Load(); mb.len() > 0 {
					vs = append(vs, &victim{s: s, box: mb})
				}
			}
			srv.sessions.mu.Unlock()
		}
		if kc {
			srv.channels.mu.Lock()
			for _, ch := range srv.channels.live {
				if mb := ch.mb.Load(); mb.len() > 0 {
					vs = append(vs, &victim{ch: ch, box: mb})
				}
			}
			srv.channels.mu.Unlock()
		}
		if kn {
			srv.conns.mu.Lock()
			for _, c := range srv.conns.live {
				if c.q.len() > 0 {
					vs = append(vs, &victim{c: c, box: &c.q})
				}
			}
			srv.conns.mu.Unlock()
		}
		if len(vs) > 0 {
			return vs[rng.Intn(len(vs))]
		}
	}
	var nSess, nChan, nConn int
	if ks {
		srv.sessions.mu.Lock()
		nSess = len(srv.sessions.live)
		srv.sessions.mu.Unlock()
	}
	if kc {
		srv.channels.mu.Lock()
		nChan = len(srv.channels.live)
		srv.channels.mu.Unlock()
	}
	if kn {
		srv.conns.mu.Lock()
		nConn = len(srv.conns.live)
		srv.conns.mu.Unlock()
	}
	total := nSess + nChan + nConn
	if total == 0 {
		return nil
	}
	// the index is drawn over the counts just read; a registry that shrank
	// meanwhile makes this strike a miss, not a biased choice
	i := rng.Intn(total)
	switch {
	case i < nSess:
		srv.sessions.mu.Lock()
		defer srv.sessions.mu.Unlock()
		if i < len(srv.sessions.live) {
			s := srv.sessions.live[i]
			return &victim{s: s, box: s.mb.Load()}
		}
	case i < nSess+nChan:
		srv.channels.mu.Lock()
		defer srv.channels.mu.Unlock()
		if j := i - nSess; j < len(srv.channels.live) {
			ch := srv.channels.live[j]
			return &victim{ch: ch, box: ch.mb.Load()}
		}
	default:
		srv.conns.mu.Lock()
		defer srv.conns.mu.Unlock()
		if j := i - nSess - nChan; j < len(srv.conns.live) {
			c := srv.conns.live[j]
			return &victim{c: c, box: &c.q}
		}
	}
	return nil
}
