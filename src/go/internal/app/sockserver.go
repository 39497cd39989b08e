// The lifecycle every socket benchmark server shares (docs/sockets.md "The lifecycle"),
// so that tcp_pingpong and echo_flood differ only in their per-connection handler,
// counters and record: bind 127.0.0.1 only, print the listening line, stop on stdin EOF
// or the line "stop", SIGTERM/SIGINT, or idle_timeout_s with no open connection; then
// close every connection and wait, bounded, for the connection goroutines.
package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"serverbench/internal/cli"
	"serverbench/internal/record"
)

const (
	loopbackHost = "127.0.0.1"
	// Bound on how long a stopping server waits for its connection goroutines.
	stopGraceTime = 5 * time.Second
	idleCheckTick = 100 * time.Millisecond
)

// sockServer tracks the open connections: the idle timeout needs their count, the
// stop closes them.
type sockServer struct {
	handle   func(net.Conn) // one connection; it need not close it
	accepted atomic.Int64
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	lastIdle time.Time // when the last connection closed (or start)
	wg       sync.WaitGroup
}

// sockRun is what a stopped server reports for its record.
type sockRun struct {
	Port       int
	Accepted   int64
	StopReason string
	Elapsed    time.Duration
}

// runSockServer runs the server of benchmark until it is told to stop, a goroutine per
// connection running handle. ok is false when it could not listen; the error line is
// then already on stderr.
func runSockServer(benchmark string, cfg cli.Config, io_ IO, handle func(net.Conn)) (sockRun, bool) {
	idle := time.Duration(cfg.Float("idle_timeout_s") * float64(time.Second))
	ln, err := net.Listen("tcp4", net.JoinHostPort(loopbackHost, strconv.FormatInt(cfg.Int("port"), 10)))
	if err != nil {
		fmt.Fprintf(io_.Stderr, "error: cannot listen on %s port %d: %s\n", loopbackHost, cfg.Int("port"), err)
		return sockRun{}, false
	}
	port := ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	s := &sockServer{handle: handle, conns: map[net.Conn]struct{}{}, lastIdle: start}
	fmt.Fprintf(io_.Stdout, `{"event":"listening","benchmark":%q,"role":"server","language":%q,"address":%q,"port":%d}`+"\n",
		benchmark, record.Language, loopbackHost, port)
	if f, ok := io_.Stdout.(*os.File); ok {
		_ = f.Sync()
	}

	stop := make(chan string, 4)
	go func() { // stdin: EOF or the line "stop"
		sc := bufio.NewScanner(io_.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "stop" {
				stop <- "stop_line"
				return
			}
		}
		stop <- "stdin_eof"
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; ok {
			stop <- "signal"
		}
	}()
	go s.acceptLoop(ln)

	tick := time.NewTicker(idleCheckTick)
	defer tick.Stop()
	reason := ""
	for reason == "" {
		select {
		case reason = <-stop:
		case <-tick.C:
			s.mu.Lock()
			if len(s.conns) == 0 && time.Since(s.lastIdle) >= idle {
				reason = "idle_timeout"
			}
			s.mu.Unlock()
		}
	}
	_ = ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGraceTime):
	}
	return sockRun{Port: port, Accepted: s.accepted.Load(), StopReason: reason, Elapsed: time.Since(start)}, true
}

// acceptLoop ends when the listener is closed.
func (s *sockServer) acceptLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *sockServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		_ = c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		if len(s.conns) == 0 {
			s.lastIdle = time.Now()
		}
		s.mu.Unlock()
	}()
	s.handle(c)
}

// isConnFault: whether a read or write error is the connection's fault. A clean close by
// the peer (EOF) is not, and neither is the server's own close of connections still open
// when it is told to stop (net.ErrClosed): the other servers do not count those either.
func isConnFault(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed)
}
