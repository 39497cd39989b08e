// Package app ties the command line to the benchmarks and the record. Run is
// the whole program except os.Exit, so tests can call it in-process.
package app

import (
	"fmt"
	"io"
	"time"

	"serverbench/internal/bench"
	"serverbench/internal/cli"
	"serverbench/internal/record"
)

// Run executes one command line and returns the exit code. stdout receives at
// most one line (the record or --version's object); errors go to stderr.
func Run(args []string, stdout, stderr io.Writer) int {
	action, cfg, err := cli.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return cli.ExitUsage
	}
	switch action {
	case cli.ActionVersion:
		return emit(record.CurrentVersion(), true, stdout, stderr)
	case cli.ActionHelp:
		io.WriteString(stdout, cli.Usage)
		return cli.ExitOK
	}
	switch cfg.Benchmark {
	case "pingping":
		rec := RunPingping(cfg)
		return emit(rec, rec.Validation.OK, stdout, stderr)
	case "spawn":
		rec := RunSpawn(cfg)
		return emit(rec, rec.Validation.OK, stdout, stderr)
	case "throughput":
		rec := RunThroughput(cfg)
		return emit(rec, rec.Validation.OK, stdout, stderr)
	}
	fmt.Fprintf(stderr, "error: unknown sub-command %q\n", cfg.Benchmark)
	return cli.ExitUsage
}

func emit(v any, ok bool, stdout, stderr io.Writer) int {
	if err := record.WriteLine(stdout, v); err != nil {
		fmt.Fprintf(stderr, "error: writing record: %s\n", err)
		return cli.ExitRunFailed
	}
	if !ok {
		fmt.Fprintln(stderr, "validation failed: see the record's validation object")
		return cli.ExitRunFailed
	}
	return cli.ExitOK
}

func perUnit(total float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return total / float64(n)
}

func RunPingping(cfg cli.Config) record.Pingping {
	r := bench.Pingping(int(cfg.MessageBytes), cfg.Repetitions, cfg.Payload == "copy")
	msgs := 2 * cfg.Repetitions
	return record.Pingping{
		Benchmark: "pingping", Language: record.Language, Variant: cfg.Variant,
		Params: record.PingpingParams{MessageBytes: cfg.MessageBytes, Repetitions: cfg.Repetitions, Payload: cfg.Payload},
		Metrics: record.PingpingMetrics{
			ElapsedS:     r.Elapsed.Seconds(),
			Messages:     msgs,
			NsPerMessage: perUnit(float64(r.Elapsed.Nanoseconds()), msgs),
		},
		Validation: record.PingpingValidation{
			OK:        r.ReceivedA == cfg.Repetitions && r.ReceivedB == cfg.Repetitions && r.PayloadErrors == 0,
			ReceivedA: r.ReceivedA, ReceivedB: r.ReceivedB, PayloadErrors: r.PayloadErrors,
		},
		Runtime: record.CurrentRuntime(),
	}
}

func RunSpawn(cfg cli.Config) record.Spawn {
	r := bench.Spawn(cfg.Processes)
	var bpp *float64
	if r.RSSBefore != nil && r.RSSAfter != nil {
		v := perUnit(float64(*r.RSSAfter-*r.RSSBefore), cfg.Processes)
		bpp = &v
	}
	return record.Spawn{
		Benchmark: "spawn", Language: record.Language, Variant: cfg.Variant,
		Params: record.SpawnParams{Processes: cfg.Processes},
		Metrics: record.SpawnMetrics{
			SpawnCallS:         r.SpawnCall.Seconds(),
			AllReadyS:          r.AllReady.Seconds(),
			RSSBytesBefore:     r.RSSBefore,
			RSSBytesAfter:      r.RSSAfter,
			BytesPerProcess:    bpp,
			RuntimeMemoryBytes: r.RuntimeMemoryBytes,
		},
		Validation: record.SpawnValidation{OK: r.Ready == cfg.Processes, Ready: r.Ready},
		Runtime:    record.CurrentRuntime(),
	}
}

func RunThroughput(cfg cli.Config) record.Throughput {
	d := time.Duration(cfg.DurationS * float64(time.Second))
	r := bench.Throughput(int(cfg.Pairs), int(cfg.MessageBytes), d, cfg.ReportEvery, cfg.Payload == "copy")
	el := r.Elapsed.Seconds()
	var perS float64
	if el > 0 {
		perS = float64(r.ReportedExchanges) / el
	}
	samples := r.Samples
	if samples == nil {
		samples = [][2]float64{} // an empty array, never null
	}
	return record.Throughput{
		Benchmark: "throughput", Language: record.Language, Variant: cfg.Variant,
		Params: record.ThroughputParams{Pairs: cfg.Pairs, MessageBytes: cfg.MessageBytes, DurationS: cfg.DurationS, ReportEvery: cfg.ReportEvery, Payload: cfg.Payload},
		Metrics: record.ThroughputMetrics{
			Exchanges:       r.ReportedExchanges,
			ElapsedS:        el,
			ExchangesPerS:   perS,
			PaperMsgsPerMin: perS * 60,
			Samples:         samples,
		},
		Validation: record.ThroughputValidation{
			OK: r.ReportedExchanges == r.CountedExchanges && r.PayloadErrors == 0 &&
				r.MinPairExchanges >= 1 && r.ReportedExchanges > 0,
			ReportedExchanges: r.ReportedExchanges,
			CountedExchanges:  r.CountedExchanges,
			PayloadErrors:     r.PayloadErrors,
			MinPairExchanges:  r.MinPairExchanges,
		},
		Runtime: record.CurrentRuntime(),
	}
}
