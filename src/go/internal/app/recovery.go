// recovery: the cost of tolerating faults and of recovering from them
// (docs/spec.md "recovery"). The benchmark is in bench/recovery.go.
package app

import (
	"fmt"
	"os"
	"time"

	"serverbench/internal/bench"
	"serverbench/internal/cli"
	"serverbench/internal/record"
)

// BreakRestartEnv names the test hook that leaves the first crashed worker dead,
// so the conformance suite can see an unrecovered run recorded invalid.
const BreakRestartEnv = "SERVERBENCH_RECOVERY_BREAK"

func init() { Register("recovery", "", checkRecovery, runRecovery) }

type recoveryParams struct {
	Pairs        int64   `json:"pairs"`
	MessageBytes int64   `json:"message_bytes"`
	DurationS    float64 `json:"duration_s"`
	CrashesPerS  float64 `json:"crashes_per_s"`
	Fault        string  `json:"fault"`
	Seed         int64   `json:"seed"`
	ReportEvery  int64   `json:"report_every"`
}

type recoveryMetrics struct {
	Exchanges         int64        `json:"exchanges"`
	ElapsedS          float64      `json:"elapsed_s"`
	ExchangesPerS     float64      `json:"exchanges_per_s"`
	Samples           [][2]float64 `json:"samples"`
	CrashesInjected   int64        `json:"crashes_injected"`
	AggregatorCrashes int64        `json:"aggregator_crashes"`
	Restarts          int64        `json:"restarts"`
	CrashTimesS       []float64    `json:"crash_times_s"`
	RestartLatencyS   []float64    `json:"restart_latency_s"`
	MessagesSent      int64        `json:"messages_sent"`
	MessagesReceived  int64        `json:"messages_received"`
	MessagesLost      int64        `json:"messages_lost"`
	ExchangesCounted  int64        `json:"exchanges_counted"`
	ExchangesLost     int64        `json:"exchanges_lost"`
	Supervision       string       `json:"supervision"`
}

type recoveryValidation struct {
	OK               bool  `json:"ok"`
	CrashesInjected  int64 `json:"crashes_injected"`
	Restarts         int64 `json:"restarts"`
	LatencySamples   int64 `json:"restart_latency_samples"`
	WorkersAlive     int64 `json:"workers_alive"`
	WorkersExpected  int64 `json:"workers_expected"`
	MessagesBalance  bool  `json:"messages_balance"`
	ExchangesBalance bool  `json:"exchanges_balance"`
	PayloadErrors    int64 `json:"payload_errors"`
	MinPairExchanges int64 `json:"min_pair_exchanges"`
}

type recoveryRecord = record.Record[recoveryParams, recoveryMetrics, recoveryValidation]

// CheckRecoveryArgs is the one rule cli.json's per-flag ranges cannot state: a
// positive rate the run is too short to show (fewer than one expected crash).
func CheckRecoveryArgs(rate, durationS float64) error {
	if rate > 0 && rate*durationS < 1 {
		return fmt.Errorf("--crashes-per-s %g with --duration-s %g expects fewer than one crash (crashes-per-s x duration-s must be >= 1, or 0 for no faults)", rate, durationS)
	}
	return nil
}

func checkRecovery(cfg cli.Config) error {
	return CheckRecoveryArgs(cfg.Float("crashes_per_s"), cfg.Float("duration_s"))
}

func runRecovery(cfg cli.Config, s IO) int {
	rec := RunRecovery(cfg, os.Getenv(BreakRestartEnv) == "1")
	return emit(rec, rec.Validation.OK, s.Stdout, s.Stderr)
}

func RunRecovery(cfg cli.Config, breakRestart bool) recoveryRecord {
	p := cfg.Int("pairs")
	o := bench.RecoveryOpts{
		Pairs: int(p), Bytes: int(cfg.Int("message_bytes")),
		Duration: time.Duration(cfg.Float("duration_s") * float64(time.Second)),
		Rate:     cfg.Float("crashes_per_s"), Fault: cfg.Str("fault"),
		Seed: uint64(cfg.Int("seed")), K: cfg.Int("report_every"), BreakRestart: breakRestart,
	}
	r := bench.Recovery(o)
	el := r.Elapsed.Seconds()
	nonNil := func(v []float64) []float64 {
		if v == nil {
			return []float64{}
		}
		return v
	}
	samples := r.Samples
	if samples == nil {
		samples = [][2]float64{}
	}
	v := recoveryValidation{
		CrashesInjected: r.Injected, Restarts: r.Restarts, LatencySamples: int64(len(r.LatenciesS)),
		WorkersAlive: r.WorkersAlive, WorkersExpected: 2 * p,
		MessagesBalance:  r.Sent == r.Received+r.Lost,
		ExchangesBalance: r.Counted == r.Exchanges+r.LostExch,
		PayloadErrors:    r.PayloadErrors, MinPairExchanges: r.MinPairExchanges,
	}
	v.OK = v.Restarts == v.CrashesInjected && v.LatencySamples == v.Restarts &&
		v.WorkersAlive == v.WorkersExpected && v.MessagesBalance && v.ExchangesBalance &&
		v.PayloadErrors == 0 && v.MinPairExchanges >= 1 && r.Exchanges > 0
	return recoveryRecord{
		Benchmark: "recovery", Language: record.Language, Variant: cfg.Variant,
		Params: recoveryParams{Pairs: p, MessageBytes: cfg.Int("message_bytes"), DurationS: cfg.Float("duration_s"),
			CrashesPerS: o.Rate, Fault: o.Fault, Seed: cfg.Int("seed"), ReportEvery: o.K},
		Metrics: recoveryMetrics{
			Exchanges: r.Exchanges, ElapsedS: el, ExchangesPerS: perSecond(r.Exchanges, el),
			Samples: samples, CrashesInjected: r.Injected, AggregatorCrashes: r.AggCrashes, Restarts: r.Restarts,
			CrashTimesS: nonNil(r.CrashTimesS), RestartLatencyS: nonNil(r.LatenciesS),
			MessagesSent: r.Sent, MessagesReceived: r.Received, MessagesLost: r.Lost,
			ExchangesCounted: r.Counted, ExchangesLost: r.LostExch,
			Supervision: "goroutine supervisor: recover() and restart on the same channels",
		},
		Validation: v,
		Runtime:    record.CurrentRuntime(),
	}
}

func perSecond(n int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}
