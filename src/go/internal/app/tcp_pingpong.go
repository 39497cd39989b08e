// tcp_pingpong: C concurrent TCP connections over loopback, R round trips each;
// the client writes the 4 bytes "Ping", the server answers "Pong". A goroutine
// per connection on both sides. --read-buffer-bytes K (1..4) is how many bytes
// each side reads before it answers or counts a round trip: K = 4 is one whole
// message; K = 1 reproduces the original Scala program's 1-byte buffer (every
// byte read triggers a reply, the client counts a round trip per byte). Both
// sides count every byte they move; docs/sockets.md.
package app

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"serverbench/internal/cli"
	"serverbench/internal/record"
)

const messageBytes = 4

var (
	pingMsg = []byte("Ping")
	pongMsg = []byte("Pong")
)

func init() {
	Register("tcp_pingpong", "server", nil, runTCPServer)
	Register("tcp_pingpong", "client", nil, runTCPClient)
}

// ---- records (spec/native-record.schema.json $defs tcp_pingpong_*) ----

type tcpServerParams struct {
	Port            int64   `json:"port"`
	ReadBufferBytes int64   `json:"read_buffer_bytes"`
	IdleTimeoutS    float64 `json:"idle_timeout_s"`
}

type tcpServerMetrics struct {
	ElapsedS            float64 `json:"elapsed_s"`
	Port                int64   `json:"port"`
	ConnectionsAccepted int64   `json:"connections_accepted"`
	BytesRead           int64   `json:"bytes_read"`
	BytesWritten        int64   `json:"bytes_written"`
	Replies             int64   `json:"replies"`
	ConnectionErrors    int64   `json:"connection_errors"`
	StopReason          string  `json:"stop_reason"`
}

type tcpValidation struct {
	OK     bool    `json:"ok"`
	Reason *string `json:"reason"`
}

type tcpServerRecord = record.Record[tcpServerParams, tcpServerMetrics, tcpValidation]

type tcpClientParams struct {
	Host            string  `json:"host"`
	Connections     int64   `json:"connections"`
	RoundTrips      int64   `json:"round_trips"`
	ReadBufferBytes int64   `json:"read_buffer_bytes"`
	TimeoutS        float64 `json:"client_timeout_s"`
}

type tcpClientMetrics struct {
	ElapsedS               float64  `json:"elapsed_s"`
	Port                   int64    `json:"port"`
	ConnectionsOpened      int64    `json:"connections_opened"`
	BytesWritten           int64    `json:"bytes_written"`
	BytesRead              int64    `json:"bytes_read"`
	RoundTripsCounted      int64    `json:"round_trips_counted"`
	RoundTripsCompleted    int64    `json:"round_trips_completed"`
	ReportedUsPerRoundTrip float64  `json:"reported_us_per_round_trip"`
	TrueUsPerRoundTrip     *float64 `json:"true_us_per_round_trip"`
	ExpectedBytesEachWay   int64    `json:"expected_bytes_each_way"`
	ConnectionErrors       int64    `json:"connection_errors"`
}

type tcpClientRecord = record.Record[tcpClientParams, tcpClientMetrics, tcpValidation]

func strptr(s string) *string { return &s }

// ---- server ----

// tcpServer: the counters; the lifecycle is runSockServer's.
type tcpServer struct {
	k                       int
	bytesRead, bytesWritten atomic.Int64
	replies, connErrs       atomic.Int64
}

func (s *tcpServer) serve(c net.Conn) {
	buf := make([]byte, s.k)
	for {
		n, err := io.ReadFull(c, buf)
		s.bytesRead.Add(int64(n))
		if err != nil {
			if isConnFault(err) {
				s.connErrs.Add(1)
			}
			return
		}
		w, err := c.Write(pongMsg)
		s.bytesWritten.Add(int64(w))
		if err != nil {
			if isConnFault(err) {
				s.connErrs.Add(1)
			}
			return
		}
		s.replies.Add(1)
	}
}

func runTCPServer(cfg cli.Config, io_ IO) int {
	k := int(cfg.Int("read_buffer_bytes"))
	s := &tcpServer{k: k}
	run, ok := runSockServer("tcp_pingpong", cfg, io_, s.serve)
	if !ok {
		return cli.ExitRunFailed
	}
	v := tcpValidation{OK: true}
	if k < messageBytes && cfg.Variant != "paper" {
		v = tcpValidation{OK: false, Reason: strptr(fmt.Sprintf(
			"read buffer of %d byte(s) < the %d-byte message: the server answered every read, not every message", k, messageBytes))}
	}
	rec := tcpServerRecord{
		Benchmark: "tcp_pingpong", Role: "server", Language: record.Language, Variant: variantOf(cfg),
		Params: tcpServerParams{Port: cfg.Int("port"), ReadBufferBytes: int64(k), IdleTimeoutS: cfg.Float("idle_timeout_s")},
		Metrics: tcpServerMetrics{
			ElapsedS: run.Elapsed.Seconds(), Port: int64(run.Port),
			ConnectionsAccepted: run.Accepted, BytesRead: s.bytesRead.Load(), BytesWritten: s.bytesWritten.Load(),
			Replies: s.replies.Load(), ConnectionErrors: s.connErrs.Load(), StopReason: run.StopReason,
		},
		Validation: v, Runtime: record.CurrentRuntime(),
	}
	return emit(rec, true, io_.Stdout, io_.Stderr) // a server that stopped as told exits 0
}

func variantOf(cfg cli.Config) string {
	if cfg.Variant == "" {
		return "fair"
	}
	return cfg.Variant
}

// ---- client ----

type connResult struct {
	written, read, counted, completed int64
	err                               error
	dialErr                           bool
}

func pingConn(addr string, rounds int64, k int, deadline time.Time) connResult {
	var r connResult
	c, err := net.DialTimeout("tcp4", addr, time.Until(deadline))
	if err != nil {
		r.err, r.dialErr = err, true
		return r
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(deadline)
	buf := make([]byte, k)
	var got int64 // bytes read on this connection
	for i := int64(0); i < rounds; i++ {
		w, err := c.Write(pingMsg)
		r.written += int64(w)
		if err != nil {
			r.err = err
			break
		}
		n, err := io.ReadFull(c, buf)
		r.read += int64(n)
		got += int64(n)
		if err != nil {
			r.err = err
			break
		}
		r.counted++ // what the original counted: one round trip per read
	}
	r.completed = got / messageBytes
	return r
}

func runTCPClient(cfg cli.Config, io_ IO) int {
	conns, rounds := cfg.Int("connections"), cfg.Int("round_trips")
	k := int(cfg.Int("read_buffer_bytes"))
	timeout := time.Duration(cfg.Float("client_timeout_s") * float64(time.Second))
	addr := net.JoinHostPort(cfg.Str("host"), strconv.FormatInt(cfg.Int("port"), 10))
	start := time.Now()
	deadline := start.Add(timeout)
	results := make([]connResult, conns)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) { defer wg.Done(); results[i] = pingConn(addr, rounds, k, deadline) }(i)
	}
	wg.Wait()
	elapsed := time.Since(start)

	m := tcpClientMetrics{ElapsedS: elapsed.Seconds(), Port: cfg.Int("port"), ExpectedBytesEachWay: messageBytes * conns * rounds}
	var firstErr error
	dialFailures := int64(0)
	for _, r := range results {
		m.BytesWritten += r.written
		m.BytesRead += r.read
		m.RoundTripsCounted += r.counted
		m.RoundTripsCompleted += r.completed
		if !r.dialErr {
			m.ConnectionsOpened++
		} else {
			dialFailures++
		}
		if r.err != nil {
			m.ConnectionErrors++
			if firstErr == nil {
				firstErr = r.err
			}
		}
	}
	if dialFailures > 0 {
		fmt.Fprintf(io_.Stderr, "error: cannot connect to %s (%d of %d connections failed): %s\n", addr, dialFailures, conns, firstErr)
		return cli.ExitRunFailed
	}
	us := float64(elapsed.Nanoseconds()) / 1e3
	m.ReportedUsPerRoundTrip = us / float64(conns*rounds)
	if m.RoundTripsCompleted > 0 {
		t := us / float64(m.RoundTripsCompleted)
		m.TrueUsPerRoundTrip = &t
	}
	v := clientValidation(m, cfg.Variant, k, conns, rounds, firstErr)
	rec := tcpClientRecord{
		Benchmark: "tcp_pingpong", Role: "client", Language: record.Language, Variant: variantOf(cfg),
		Params: tcpClientParams{Host: cfg.Str("host"), Connections: conns, RoundTrips: rounds,
			ReadBufferBytes: int64(k), TimeoutS: cfg.Float("client_timeout_s")},
		Metrics: m, Validation: v, Runtime: record.CurrentRuntime(),
	}
	return emit(rec, v.OK, io_.Stdout, io_.Stderr)
}

// clientValidation: fair runs must move 4*C*R bytes each way; a paper run
// (the original's buffer on purpose) must show exactly the original's
// accounting: 4*C*R bytes written, K*C*R read.
func clientValidation(m tcpClientMetrics, variant string, k int, conns, rounds int64, firstErr error) tcpValidation {
	want := m.ExpectedBytesEachWay
	switch {
	case firstErr != nil:
		return tcpValidation{Reason: strptr(fmt.Sprintf("%d connection(s) failed: %s", m.ConnectionErrors, firstErr))}
	case variant == "paper" && k < messageBytes:
		if m.BytesWritten == want && m.BytesRead == int64(k)*conns*rounds {
			return tcpValidation{OK: true}
		}
		return tcpValidation{Reason: strptr(fmt.Sprintf("paper variant: expected %d bytes written and %d read, got %d and %d",
			want, int64(k)*conns*rounds, m.BytesWritten, m.BytesRead))}
	case m.BytesWritten != want || m.BytesRead != want:
		return tcpValidation{Reason: strptr(fmt.Sprintf(
			"moved %d bytes out and %d in, expected %d each way (4 x %d connections x %d round trips); read buffer %d byte(s): a round trip was counted per read",
			m.BytesWritten, m.BytesRead, want, conns, rounds, k))}
	}
	return tcpValidation{OK: true}
}
