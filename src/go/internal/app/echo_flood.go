// echo_flood server: a goroutine per connection, each reading up to 32 KiB and writing
// it back (the idiomatic Go echo server). Counts every byte it read and echoed. The
// load generator is the c language's client; docs/spec.md "Socket benchmarks".
package app

import (
	"bufio"
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

const echoBufferBytes = 32768

func init() {
	Register("echo_flood", "server", runEchoServer)
}

type echoServerParams struct {
	Port         int64   `json:"port"`
	IdleTimeoutS float64 `json:"idle_timeout_s"`
}

type echoServerMetrics struct {
	ElapsedS            float64 `json:"elapsed_s"`
	Port                int64   `json:"port"`
	ConnectionsAccepted int64   `json:"connections_accepted"`
	BytesRead           int64   `json:"bytes_read"`
	BytesWritten        int64   `json:"bytes_written"`
	ConnectionErrors    int64   `json:"connection_errors"`
	StopReason          string  `json:"stop_reason"`
}

type echoServerRecord struct {
	Benchmark  string            `json:"benchmark"`
	Role       string            `json:"role"`
	Language   string            `json:"language"`
	Variant    string            `json:"variant"`
	Params     echoServerParams  `json:"params"`
	Metrics    echoServerMetrics `json:"metrics"`
	Validation tcpValidation     `json:"validation"`
	Runtime    record.Runtime    `json:"runtime"`
}

type echoServer struct {
	bytesRead, bytesWritten, accepted, connErrs atomic.Int64
	mu                                          sync.Mutex
	conns                                       map[net.Conn]struct{}
	lastIdle                                    time.Time
	wg                                          sync.WaitGroup
}

func (s *echoServer) serve(c net.Conn) {
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
	buf := make([]byte, echoBufferBytes)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			s.bytesRead.Add(int64(n))
			w, werr := c.Write(buf[:n])
			s.bytesWritten.Add(int64(w))
			if werr != nil {
				s.connErrs.Add(1)
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				s.connErrs.Add(1)
			}
			return
		}
	}
}

func runEchoServer(cfg cli.Config, io_ IO) int {
	idle := time.Duration(cfg.Float("idle_timeout_s") * float64(time.Second))
	ln, err := net.Listen("tcp4", net.JoinHostPort(loopbackHost, strconv.FormatInt(cfg.Int("port"), 10)))
	if err != nil {
		fmt.Fprintf(io_.Stderr, "error: cannot listen on %s port %d: %s\n", loopbackHost, cfg.Int("port"), err)
		return cli.ExitRunFailed
	}
	port := ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	s := &echoServer{conns: map[net.Conn]struct{}{}, lastIdle: start}
	fmt.Fprintf(io_.Stdout, `{"event":"listening","benchmark":"echo_flood","role":"server","language":%q,"address":%q,"port":%d}`+"\n",
		record.Language, loopbackHost, port)
	if f, ok := io_.Stdout.(*os.File); ok {
		_ = f.Sync()
	}
	stop := make(chan string, 4)
	go func() {
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
	go func() {
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
	}()
	tick := time.NewTicker(100 * time.Millisecond)
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
	rec := echoServerRecord{
		Benchmark: "echo_flood", Role: "server", Language: record.Language, Variant: variantOf(cfg),
		Params: echoServerParams{Port: cfg.Int("port"), IdleTimeoutS: cfg.Float("idle_timeout_s")},
		Metrics: echoServerMetrics{
			ElapsedS: time.Since(start).Seconds(), Port: int64(port), ConnectionsAccepted: s.accepted.Load(),
			BytesRead: s.bytesRead.Load(), BytesWritten: s.bytesWritten.Load(), ConnectionErrors: s.connErrs.Load(),
			StopReason: reason,
		},
		Validation: tcpValidation{OK: true}, Runtime: record.CurrentRuntime(),
	}
	return emit(rec, true, io_.Stdout, io_.Stderr)
}
