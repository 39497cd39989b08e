// im server: the IRC-subset instant-messaging server of the case study (internal/im,
// docs/im.md) run through the socket lifecycle every server shares (sockserver.go).
package app

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"serverbench/internal/cli"
	"serverbench/internal/im"
	"serverbench/internal/record"
)

func init() {
	Register("im", "server", nil, runIMServer)
}

type imServerParams struct {
	Port            int64   `json:"port"`
	IdleTimeoutS    float64 `json:"idle_timeout_s"`
	SendqLines      int64   `json:"sendq_lines"`
	ChaosIntervalMs int64   `json:"chaos_interval_ms"`
	ChaosTarget     string  `json:"chaos_target"`
	ChaosPick       string  `json:"chaos_pick"`
	Seed            int64   `json:"seed"`
}

type imServerMetrics struct {
	ElapsedS             float64 `json:"elapsed_s"`
	Port                 int64   `json:"port"`
	StopReason           string  `json:"stop_reason"`
	ConnectionsAccepted  int64   `json:"connections_accepted"`
	ConnectionErrors     int64   `json:"connection_errors"`
	ClientsRegisteredMax int64   `json:"clients_registered_max"`
	MessagesRouted       int64   `json:"messages_routed"`
	ChannelDeliveries    int64   `json:"channel_deliveries"`
	SessionsStarted      int64   `json:"sessions_started"`
	SessionsKilled       int64   `json:"sessions_killed"`
	SessionsRestarted    int64   `json:"sessions_restarted"`
	ChannelsKilled       int64   `json:"channels_killed"`
	ChannelsRestarted    int64   `json:"channels_restarted"`
	ConnectionsKilled    int64   `json:"connections_killed"`
	ChaosDropped         int64   `json:"chaos_dropped_messages"`
	LiveBytes            *int64  `json:"live_bytes"` // null when no MEMORY command came
	SendqDisconnects     int64   `json:"sendq_disconnects"`
	BadLines             int64   `json:"bad_lines"`
}

type imServerRecord struct {
	Benchmark  string          `json:"benchmark"`
	Role       string          `json:"role"`
	Language   string          `json:"language"`
	Variant    string          `json:"variant"`
	Params     imServerParams  `json:"params"`
	Metrics    imServerMetrics `json:"metrics"`
	Validation tcpValidation   `json:"validation"`
	Runtime    record.Runtime  `json:"runtime"`
}

// imProtocol reads the subset's name and limits from the built-in spec/cli.json.
func imProtocol() (im.Protocol, error) {
	var spec struct {
		Benchmarks struct {
			IM im.Protocol `json:"im"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(cli.SpecJSON(), &spec); err != nil {
		return im.Protocol{}, err
	}
	p := spec.Benchmarks.IM
	if p.ServerName == "" || p.LineMaxBytes <= 2 || p.NickMaxChars < 1 || p.ChannelMaxChars < 2 {
		return p, fmt.Errorf("cli.json benchmarks.im lacks server_name, line_max_bytes, nick_max_chars or channel_max_chars")
	}
	return p, nil
}

func runIMServer(cfg cli.Config, io_ IO) int {
	p, err := imProtocol()
	if err != nil {
		fmt.Fprintf(io_.Stderr, "error: %s\n", err)
		return cli.ExitRunFailed
	}
	// a CPU profile of the whole run for `go tool pprof` (profiling only; the harness
	// never sets it)
	if path := os.Getenv("SERVERBENCH_IM_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
	}
	srv := im.New(im.Config{
		Protocol:      p,
		SendqLines:    int(cfg.Int("sendq_lines")),
		ChaosInterval: time.Duration(cfg.Int("chaos_interval_ms")) * time.Millisecond,
		ChaosTarget:   cfg.Str("chaos_target"),
		ChaosPick:     cfg.Str("chaos_pick"),
		Seed:          cfg.Int("seed"),
	})
	run, ok := runSockServer("im", cfg, io_, srv.Serve)
	srv.Stop()
	if !ok {
		return cli.ExitRunFailed
	}
	m := srv.Metrics()
	rec := imServerRecord{
		Benchmark: "im", Role: "server", Language: record.Language, Variant: variantOf(cfg),
		Params: imServerParams{
			Port: cfg.Int("port"), IdleTimeoutS: cfg.Float("idle_timeout_s"), SendqLines: cfg.Int("sendq_lines"),
			ChaosIntervalMs: cfg.Int("chaos_interval_ms"), ChaosTarget: cfg.Str("chaos_target"),
			ChaosPick: cfg.Str("chaos_pick"), Seed: cfg.Int("seed"),
		},
		Metrics: imServerMetrics{
			ElapsedS: run.Elapsed.Seconds(), Port: int64(run.Port), StopReason: run.StopReason,
			ConnectionsAccepted: run.Accepted, ConnectionErrors: m.ConnectionErrors,
			ClientsRegisteredMax: m.ClientsRegisteredMax,
			MessagesRouted:       m.MessagesRouted, ChannelDeliveries: m.ChannelDeliveries,
			SessionsStarted: m.SessionsStarted, SessionsKilled: m.SessionsKilled, SessionsRestarted: m.SessionsRestarted,
			ChannelsKilled: m.ChannelsKilled, ChannelsRestarted: m.ChannelsRestarted,
			ConnectionsKilled: m.ConnectionsKilled, ChaosDropped: m.ChaosDropped, LiveBytes: m.LiveBytes,
			SendqDisconnects: m.SendqDisconnects, BadLines: m.BadLines,
		},
		Validation: tcpValidation{OK: true}, Runtime: record.CurrentRuntime(),
	}
	return emit(rec, true, io_.Stdout, io_.Stderr)
}
