package im

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config is what the command line sets.
type Config struct {
	Protocol      Protocol
	SendqLines    int           // bound of each connection's outgoing queue
	ChaosInterval time.Duration // 0: no chaos
	ChaosTarget   string        // session | channel | connection | any ("" = session)
	ChaosPick     string        // random | queued ("" = random)
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
	ChannelsKilled       int64
	ChannelsRestarted    int64
	ConnectionsKilled    int64
	ChaosDropped         int64  // messages discarded with chaos's victims (mailboxes, send queues)
	LiveBytes            *int64 // the last MEMORY command's measure; nil if none came
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
	conns    connRegistry
	stopped  chan struct{}
	stopOnce sync.Once
	sup      *supervisor

	registeredNow atomic.Int64
	liveBytes     atomic.Int64 // -1 until a MEMORY command measured it
	m             struct {
		registeredMax, routed, chanDeliveries                  atomic.Int64
		started, killed, restarted, sendqDisconnects, badLines atomic.Int64
		chansKilled, chansRestarted, connsKilled, dropped      atomic.Int64
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
	s.liveBytes.Store(-1)
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
	m := Metrics{
		ClientsRegisteredMax: s.m.registeredMax.Load(), MessagesRouted: s.m.routed.Load(),
		ChannelDeliveries: s.m.chanDeliveries.Load(), SessionsStarted: s.m.started.Load(),
		SessionsKilled: s.m.killed.Load(), SessionsRestarted: s.m.restarted.Load(),
		ChannelsKilled: s.m.chansKilled.Load(), ChannelsRestarted: s.m.chansRestarted.Load(),
		ConnectionsKilled: s.m.connsKilled.Load(), ChaosDropped: s.m.dropped.Load(),
		SendqDisconnects: s.m.sendqDisconnects.Load(), BadLines: s.m.badLines.Load(),
		ConnectionErrors: s.m.connErrors.Load(),
	}
	if n := s.liveBytes.Load(); n >= 0 {
		m.LiveBytes = &n
	}
	return m
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

// claim gives key to c, releasing c's previous nick; false when another live
// client holds key, or c's own nick was already freed (it was killed or closed).
// A holder whose peer has already closed its socket gives the nick up at once:
// a client that drops its connection and reconnects at once with the same nick
// must not get 433 because the old connection's clean-up has not run yet.
func (r *nickRegistry) claim(key string, c *client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.nickFreed {
		return false
	}
	if holder, taken := r.m[key]; taken && holder != c {
		if !holder.peerClosed() {
			return false
		}
		holder.nickFreed = true
	}
	if c.nickKey != "" && c.nickKey != key && r.m[c.nickKey] == c {
		delete(r.m, c.nickKey)
	}
	r.m[key], c.nickKey = c, key
	return true
}

// release frees c's nick for good (c is closing or was killed).
func (r *nickRegistry) release(c *client) {
	r.mu.Lock()
	if r.m[c.nickKey] == c {
		delete(r.m, c.nickKey)
	}
	c.nickFreed = true
	r.mu.Unlock()
}

func (r *nickRegistry) lookup(key string) *client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[key]
}

// peerClosed: whether c is closing or its peer has closed its socket (a
// non-blocking MSG_PEEK reads end of file or an error). Control takes no read
// lock, so it does not wait for c's reader, blocked in Read.
func (c *client) peerClosed() bool {
	if c.dead.Load() {
		return true
	}
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	err = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, e := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = e == nil && n == 0 || e != nil && e != syscall.EAGAIN && e != syscall.EINTR
	})
	return err != nil || closed
}

// connRegistry holds the live connections, for chaos's uniform choice.
type connRegistry struct {
	mu   sync.Mutex
	live []*client
}

func (r *connRegistry) add(c *client) {
	r.mu.Lock()
	c.live = len(r.live)
	r.live = append(r.live, c)
	r.mu.Unlock()
}

// removeLocked takes c out (false if it was out already); mu held.
func (r *connRegistry) removeLocked(c *client) bool {
	if c.live < 0 {
		return false
	}
	last := r.live[len(r.live)-1]
	r.live[c.live], last.live = last, c.live
	r.live[len(r.live)-1] = nil
	r.live = r.live[:len(r.live)-1]
	c.live = -1
	return true
}

func (r *connRegistry) remove(c *client) {
	r.mu.Lock()
	r.removeLocked(c)
	r.mu.Unlock()
}
