package im

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config is what the command line sets.
type Config struct {
	Protocol      Protocol
	SendqLines    int           // bound of each connection's outgoing queue
	ChaosInterval time.Duration // 0: no chaos
	Seed          int64         // seeds the chaos monkey's choice
}

// Metrics are the server's counters, read once it has stopped.
type Metrics struct {
	ClientsRegisteredMax int64 // most clients registered at once
	MessagesRouted       int64 // one-to-one PRIVMSGs the session goroutines forwarded
	ChannelDeliveries    int64 // lines those fan-outs delivered
	SessionsStarted      int64
	SessionsKilled       int64
	SessionsRestarted    int64
	SendqDisconnects     int64
	BadLines             int64 // lines answered with an error numeric (417, 421, 451 ...)
	ConnectionErrors     int64 // reads or writes that failed other than by a clean close
}

// Server holds the registries shared by every connection.
type Server struct {
	cfg      Config
	nicks    nickRegistry
	sessions sessionRegistry
	channels channelRegistry
	stopped  chan struct{}
	stopOnce sync.Once
	sup      *supervisor

	registeredNow atomic.Int64
	m             struct {
		registeredMax, routed, chanDeliveries                  atomic.Int64
		started, killed, restarted, sendqDisconnects, badLines atomic.Int64
		connErrors                                             atomic.Int64
	}
}

// New starts a server's supervisor (and chaos monkey when cfg asks for one);
// Serve then runs each accepted connection and Stop ends them.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, stopped: make(chan struct{})}
	s.nicks.m = map[string]*client{}
	s.sessions.m = map[pairKey]*session{}
	s.channels.m = map[string]*channel{}
	s.sup = newSupervisor(s)
	go s.sup.run()
	return s
}

// Stop ends the supervisor, the chaos monkey and every session and channel
// goroutine; the connections are closed by whoever accepted them.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stopped) })
	<-s.sup.done
}

// Metrics reads the counters.
func (s *Server) Metrics() Metrics {
	return Metrics{
		ClientsRegisteredMax: s.m.registeredMax.Load(), MessagesRouted: s.m.routed.Load(),
		ChannelDeliveries: s.m.chanDeliveries.Load(), SessionsStarted: s.m.started.Load(),
		SessionsKilled: s.m.killed.Load(), SessionsRestarted: s.m.restarted.Load(),
		SendqDisconnects: s.m.sendqDisconnects.Load(), BadLines: s.m.badLines.Load(),
		ConnectionErrors: s.m.connErrors.Load(),
	}
}

// Serve runs one connection until it ends; it does not close c.
func (s *Server) Serve(c net.Conn) {
	newClient(s, c).serve()
}

func (s *Server) registeredOne() {
	n := s.registeredNow.Add(1)
	for {
		max := s.m.registeredMax.Load()
		if n <= max || s.m.registeredMax.CompareAndSwap(max, n) {
			return
		}
	}
}

// nickRegistry maps each folded nick to its client, registered or not (a nick
// is claimed by NICK, so a collision is answered at once).
type nickRegistry struct {
	mu sync.Mutex
	m  map[string]*client
}

// claim gives key to c, releasing old (c's previous nick, "" if none); false
// when another client holds key.
func (r *nickRegistry) claim(key, old string, c *client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if holder, taken := r.m[key]; taken && holder != c {
		return false
	}
	if old != "" && old != key {
		delete(r.m, old)
	}
	r.m[key] = c
	return true
}

func (r *nickRegistry) release(key string, c *client) {
	r.mu.Lock()
	if r.m[key] == c {
		delete(r.m, key)
	}
	r.mu.Unlock()
}

func (r *nickRegistry) lookup(key string) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[key]
}
