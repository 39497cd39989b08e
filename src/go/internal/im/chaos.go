package im

// This file: the chaos monkey. Every ChaosInterval it kills one live process
// of ChaosTarget (session, channel, connection, or any of them uniformly),
// picked at random among all of them, or ("queued") among those whose mailbox
// holds something at that moment (at random among all when none does). The
// kills themselves are killSessionLocked, killChannelLocked, killConnLocked.

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
	for {
		select {
		case <-t.C:
			srv.strike(rng)
		case <-srv.stopped:
			return
		}
	}
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

// strike kills one victim. Each registry is read under its own lock and the
// victim is killed under its registry's lock if it is still live then.
func (srv *Server) strike(rng *rand.Rand) {
	ks, kc, kn := srv.kinds()
	if srv.cfg.ChaosPick == "queued" {
		var ss []*session
		var cs []*channel
		var ns []*client
		if ks {
			srv.sessions.mu.Lock()
			for _, s := range srv.sessions.live {
				if s.mb.Load().len() > 0 {
					ss = append(ss, s)
				}
			}
			srv.sessions.mu.Unlock()
		}
		if kc {
			srv.channels.mu.Lock()
			for _, ch := range srv.channels.live {
				if ch.mb.Load().len() > 0 {
					cs = append(cs, ch)
				}
			}
			srv.channels.mu.Unlock()
		}
		if kn {
			srv.conns.mu.Lock()
			for _, c := range srv.conns.live {
				if c.q.len() > 0 {
					ns = append(ns, c)
				}
			}
			srv.conns.mu.Unlock()
		}
		if n := len(ss) + len(cs) + len(ns); n > 0 {
			i := rng.Intn(n)
			switch {
			case i < len(ss):
				srv.sessions.mu.Lock()
				if s := ss[i]; !s.ended {
					srv.killSessionLocked(s)
				}
				srv.sessions.mu.Unlock()
			case i < len(ss)+len(cs):
				srv.channels.mu.Lock()
				if ch := cs[i-len(ss)]; !ch.gone {
					srv.killChannelLocked(ch)
				}
				srv.channels.mu.Unlock()
			default:
				srv.conns.mu.Lock()
				srv.killConnLocked(ns[i-len(ss)-len(cs)]) // a no-op if it has left
				srv.conns.mu.Unlock()
			}
			return
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
		return
	}
	// the index is drawn over the counts just read; a registry that shrank
	// meanwhile makes this strike a miss, not a biased choice
	i := rng.Intn(total)
	switch {
	case i < nSess:
		srv.sessions.mu.Lock()
		if i < len(srv.sessions.live) {
			srv.killSessionLocked(srv.sessions.live[i])
		}
		srv.sessions.mu.Unlock()
	case i < nSess+nChan:
		srv.channels.mu.Lock()
		if j := i - nSess; j < len(srv.channels.live) {
			srv.killChannelLocked(srv.channels.live[j])
		}
		srv.channels.mu.Unlock()
	default:
		srv.conns.mu.Lock()
		if j := i - nSess - nChan; j < len(srv.conns.live) {
			srv.killConnLocked(srv.conns.live[j])
		}
		srv.conns.mu.Unlock()
	}
}
