// echo_flood server: a goroutine per connection, each reading up to 32 KiB and writing
// it back (the idiomatic Go echo server). Counts every byte it read and echoed. The
// load generator is the c language's client; docs/sockets.md.
package app

import (
	"net"
	"sync/atomic"

	"serverbench/internal/cli"
	"serverbench/internal/record"
)

const echoBufferBytes = 32768

func init() {
	Register("echo_flood", "server", nil, runEchoServer)
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

type echoServerRecord = record.Record[echoServerParams, echoServerMetrics, tcpValidation]

// echoServer: the counters; the lifecycle is runSockServer's.
type echoServer struct {
	bytesRead, bytesWritten, connErrs atomic.Int64
}

func (s *echoServer) serve(c net.Conn) {
	buf := make([]byte, echoBufferBytes)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			s.bytesRead.Add(int64(n))
			w, werr := c.Write(buf[:n])
			s.bytesWritten.Add(int64(w))
			if werr != nil {
				if isConnFault(werr) {
					s.connErrs.Add(1)
				}
				return
			}
		}
		if err != nil {
			if isConnFault(err) {
				s.connErrs.Add(1)
			}
			return
		}
	}
}

func runEchoServer(cfg cli.Config, io_ IO) int {
	s := &echoServer{}
	run, ok := runSockServer("echo_flood", cfg, io_, s.serve)
	if !ok {
		return cli.ExitRunFailed
	}
	rec := echoServerRecord{
		Benchmark: "echo_flood", Role: "server", Language: record.Language, Variant: variantOf(cfg),
		Params: echoServerParams{Port: cfg.Int("port"), IdleTimeoutS: cfg.Float("idle_timeout_s")},
		Metrics: echoServerMetrics{
			ElapsedS: run.Elapsed.Seconds(), Port: int64(run.Port), ConnectionsAccepted: run.Accepted,
			BytesRead: s.bytesRead.Load(), BytesWritten: s.bytesWritten.Load(), ConnectionErrors: s.connErrs.Load(),
			StopReason: run.StopReason,
		},
		Validation: tcpValidation{OK: true}, Runtime: record.CurrentRuntime(),
	}
	return emit(rec, true, io_.Stdout, io_.Stderr)
}
