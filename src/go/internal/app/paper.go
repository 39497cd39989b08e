package app

// The paper and mixed variants (docs/spec.md "The paper variant"): the same
// benchmarks with the original programs' quirks switched on knob by knob. The
// fair variant goes through RunPingping/RunSpawn/RunThroughput unchanged.

import (
	"fmt"
	"time"

	"serverbench/internal/bench"
	"serverbench/internal/cli"
	"serverbench/internal/record"
)

// goBatch is the original Go throughput's report batch
// (ConcurrentProcessesThroughput/go/maxSpeakers.go line 38).
const goBatch = 10000

// CheckKnobs refuses a knob go does not have, or a value that contradicts
// --variant: a usage error (exit 2) and nothing runs.
func CheckKnobs(cfg cli.Config) error {
	_, err := bench.ResolveKnobs(cli.SpecJSON(), cfg.Benchmark, record.Language, cfg.Variant, cfg.Params)
	return err
}

// Knobbed resolves the knobs, then runs; registered with CheckKnobs, which
// refuses the same errors before anything starts.
func Knobbed[T any](run func(cli.Config, bench.Knobs) T, ok func(T) bool) Runner {
	return func(cfg cli.Config, s IO) int {
		k, err := bench.ResolveKnobs(cli.SpecJSON(), cfg.Benchmark, record.Language, cfg.Variant, cfg.Params)
		if err != nil {
			fmt.Fprintf(s.Stderr, "error: %s\n", err)
			return cli.ExitUsage
		}
		rec := run(cfg, k)
		return emit(rec, ok(rec), s.Stdout, s.Stderr)
	}
}

func f64(v float64) *float64 { return &v }

// given is a knob flag's value when it was given on the command line (not "variant").
func given(cfg cli.Config, param string) *string {
	if v, ok := cfg.Params[param].(string); ok && v != "variant" {
		return &v
	}
	return nil
}
func i64(v int64) *int64 { return &v }

// sendMode is the effective payload handling: knob send, or --payload when
// send is "payload".
func sendMode(cfg cli.Config, k bench.Knobs) string {
	if s := k["send"]; s != "" && s != "payload" {
		return s
	}
	return cfg.Str("payload")
}

func RunPingpingKnobs(cfg cli.Config, k bench.Knobs) record.Pingping {
	if cfg.Variant == "fair" {
		return RunPingping(cfg)
	}
	capacity := 1
	if k.Is("mailbox", "100") {
		capacity = 100
	}
	send := sendMode(cfg, k)
	b, r := cfg.Int("message_bytes"), cfg.Int("repetitions")
	res := bench.PingpingWith(int(b), r, bench.PingOpts{Capacity: capacity, Copy: send == "copy"})
	msgs := 2 * r
	return record.Pingping{
		Benchmark: "pingping", Language: record.Language, Variant: cfg.Variant,
		Params: record.PingpingParams{MessageBytes: b, Repetitions: r, Payload: cfg.Str("payload"),
			Send: given(cfg, "send"), Mailbox: given(cfg, "mailbox")},
		Metrics: record.PingpingMetrics{
			ElapsedS:         res.Elapsed.Seconds(),
			Messages:         msgs,
			NsPerMessage:     perUnit(float64(res.Elapsed.Nanoseconds()), msgs),
			ReportedElapsedS: f64(res.ReportedS),
			TrueElapsedS:     f64(res.Elapsed.Seconds()),
		},
		Validation: record.PingpingValidation{
			OK:        res.ReceivedA == r && res.ReceivedB == r && res.PayloadErrors == 0,
			ReceivedA: res.ReceivedA, ReceivedB: res.ReceivedB, PayloadErrors: res.PayloadErrors,
		},
		Runtime: record.CurrentRuntime(),
		Knobs:   k,
	}
}

func RunSpawnKnobs(cfg cli.Config, k bench.Knobs) record.Spawn {
	if cfg.Variant == "fair" {
		return RunSpawn(cfg)
	}
	n := cfg.Int("processes")
	res := bench.Spawn(n)
	var bpp *float64
	if res.RSSBefore != nil && res.RSSAfter != nil {
		bpp = f64(perUnit(float64(*res.RSSAfter-*res.RSSBefore), n))
	}
	reported := res.AllReady.Seconds()
	if k.Is("timer", "spawn_call") {
		reported = res.ReportedS
	}
	return record.Spawn{
		Benchmark: "spawn", Language: record.Language, Variant: cfg.Variant,
		Params: record.SpawnParams{Processes: n, Timer: given(cfg, "timer")},
		Metrics: record.SpawnMetrics{
			SpawnCallS: res.SpawnCall.Seconds(), AllReadyS: res.AllReady.Seconds(),
			RSSBytesBefore: res.RSSBefore, RSSBytesAfter: res.RSSAfter, BytesPerProcess: bpp,
			RuntimeMemoryBytes: res.RuntimeMemoryBytes,
			ReportedElapsedS:   f64(reported), TrueElapsedS: f64(res.AllReady.Seconds()),
		},
		Validation: record.SpawnValidation{OK: res.Ready == n, Ready: res.Ready},
		Runtime:    record.CurrentRuntime(),
		Knobs:      k,
	}
}

func RunThroughputKnobs(cfg cli.Config, k bench.Knobs) record.Throughput {
	if cfg.Variant == "fair" {
		return RunThroughput(cfg)
	}
	d := time.Duration(cfg.Float("duration_s") * float64(time.Second))
	send := sendMode(cfg, k)
	o := bench.ThroughOpts{Capacity: 1, Copy: send == "copy", SharedBuffer: k.Is("server_buffer", "shared"),
		Batched: k.Is("counting", "batched"), BatchSize: cfg.Int("report_every")}
	if k.Is("mailbox", "0") {
		o.Capacity = 0
	}
	if o.Batched {
		o.BatchSize = goBatch
	}
	p, b := cfg.Int("pairs"), cfg.Int("message_bytes")
	r := bench.ThroughputWith(int(p), int(b), d, o)
	el := r.Elapsed.Seconds()
	perMin := func(n int64, s float64) float64 {
		if s <= 0 {
			return 0
		}
		return float64(n) / s * 60
	}
	repN, repS := r.ReportedExchanges, el
	if o.Batched {
		repN = r.WindowBatched
	}
	if k.Is("window", "original") {
		repS = r.WindowReportedS
	}
	samples := r.Samples
	if samples == nil {
		samples = [][2]float64{}
	}
	printed := true
	return record.Throughput{
		Benchmark: "throughput", Language: record.Language, Variant: cfg.Variant,
		Params: record.ThroughputParams{Pairs: p, MessageBytes: b, DurationS: cfg.Float("duration_s"), ReportEvery: cfg.Int("report_every"),
			Payload: cfg.Str("payload"), Send: given(cfg, "send"), Mailbox: given(cfg, "mailbox"),
			ServerBuffer: given(cfg, "server_buffer"), Counting: given(cfg, "counting"), Window: given(cfg, "window")},
		Metrics: record.ThroughputMetrics{
			Exchanges: r.ReportedExchanges, ElapsedS: el,
			ExchangesPerS: perMin(r.ReportedExchanges, el) / 60, PaperMsgsPerMin: perMin(r.ReportedExchanges, el),
			Samples:         samples,
			ReportedPrinted: &printed, ReportedExchanges: i64(repN), ReportedElapsedS: f64(repS),
			ReportedMsgsPerMin: f64(perMin(repN, repS)),
			TrueExchanges:      i64(r.ReportedExchanges), TrueElapsedS: f64(el), TrueMsgsPerMin: f64(perMin(r.ReportedExchanges, el)),
			BatchSize: i64(o.BatchSize),
		},
		Validation: record.ThroughputValidation{
			OK: r.ReportedExchanges == r.CountedExchanges && r.PayloadErrors == 0 &&
				r.MinPairExchanges >= 1 && r.ReportedExchanges > 0,
			ReportedExchanges: r.ReportedExchanges, CountedExchanges: r.CountedExchanges,
			PayloadErrors: r.PayloadErrors, MinPairExchanges: r.MinPairExchanges,
		},
		Runtime: record.CurrentRuntime(),
		Knobs:   k,
	}
}
