// Package app ties the command line to the benchmarks and the record. Run is
// the whole program except os.Exit, so tests can call it in-process.
package app

import (
	"fmt"
	"io"
	"strings"
	"time"

	"serverbench/internal/bench"
	"serverbench/internal/cli"
	"serverbench/internal/record"
)

// IO is what a runner may read and write: stdout carries only what the
// contract allows (the record; a server's listening line first), errors go
// to stderr.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Runner runs one parsed command line and returns the exit code.
type Runner func(cfg cli.Config, io IO) int

// Check refuses a parsed command line for a rule cli.json's flags cannot
// state; its error is a usage error (exit 2) and nothing runs.
type Check func(cfg cli.Config) error

type entry struct {
	check Check // nil: every parsed command line is accepted
	run   Runner
}

// runners by benchmark, or "benchmark role" for benchmarks with roles.
var runners = map[string]entry{}

// Register makes a benchmark (role "" when it has no roles) runnable; call it
// from an init function in the file that implements the benchmark. check
// (may be nil) runs before r, so a refused command line starts nothing.
func Register(benchmark, role string, check Check, r Runner) {
	key := strings.TrimSpace(benchmark + " " + role)
	if _, dup := runners[key]; dup {
		panic("app.Register: " + key + " registered twice")
	}
	runners[key] = entry{check: check, run: r}
}

// Registered reports whether a runner exists for benchmark and role.
func Registered(benchmark, role string) bool {
	_, ok := runners[strings.TrimSpace(benchmark+" "+role)]
	return ok
}

// Record runs a benchmark that prints just its record: emit() writes it.
func Record[T any](run func(cli.Config) T, ok func(T) bool) Runner {
	return func(cfg cli.Config, s IO) int {
		rec := run(cfg)
		return emit(rec, ok(rec), s.Stdout, s.Stderr)
	}
}

func init() {
	// Knobbed (paper.go): knobs resolved first; the fair variant runs RunPingping etc. unchanged.
	Register("pingping", "", CheckKnobs, Knobbed(RunPingpingKnobs, func(r record.Pingping) bool { return r.Validation.OK }))
	Register("spawn", "", CheckKnobs, Knobbed(RunSpawnKnobs, func(r record.Spawn) bool { return r.Validation.OK }))
	Register("throughput", "", CheckKnobs, Knobbed(RunThroughputKnobs, func(r record.Throughput) bool { return r.Validation.OK }))
}

// Run executes one command line and returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	r, cfg, code := Accept(args, stdout, stderr)
	if r == nil {
		return code
	}
	return r(cfg, IO{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// Accept is Run up to the start of a benchmark: it parses args, answers
// --version and --help, and writes a usage error to stderr. It returns the
// runner to start with its config, or a nil runner and the exit code when
// there is nothing to run.
func Accept(args []string, stdout, stderr io.Writer) (Runner, cli.Config, int) {
	action, cfg, err := cli.Parse(record.Language, args)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return nil, cfg, cli.ExitUsage
	}
	switch action {
	case cli.ActionVersion:
		return nil, cfg, emit(record.CurrentVersion(), true, stdout, stderr)
	case cli.ActionHelp:
		_, _ = io.WriteString(stdout, cli.Embedded.Usage(record.Language))
		return nil, cfg, cli.ExitOK
	}
	e, ok := runners[strings.TrimSpace(cfg.Benchmark+" "+cfg.Role)]
	if !ok {
		fmt.Fprintf(stderr, "error: %s %s is listed for go in cli.json but not built into this program\n", cfg.Benchmark, cfg.Role)
		return nil, cfg, cli.ExitUsage
	}
	if e.check != nil {
		if err := e.check(cfg); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", err)
			return nil, cfg, cli.ExitUsage
		}
	}
	return e.run, cfg, cli.ExitOK
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
	r := bench.Pingping(int(cfg.Int("message_bytes")), cfg.Int("repetitions"), cfg.Str("payload") == "copy")
	msgs := 2 * cfg.Int("repetitions")
	return record.Pingping{
		Benchmark: "pingping", Language: record.Language, Variant: cfg.Variant,
		Params: record.PingpingParams{MessageBytes: cfg.Int("message_bytes"), Repetitions: cfg.Int("repetitions"), Payload: cfg.Str("payload")},
		Metrics: record.PingpingMetrics{
			ElapsedS:     r.Elapsed.Seconds(),
			Messages:     msgs,
			NsPerMessage: perUnit(float64(r.Elapsed.Nanoseconds()), msgs),
		},
		Validation: record.PingpingValidation{
			OK:        r.ReceivedA == cfg.Int("repetitions") && r.ReceivedB == cfg.Int("repetitions") && r.PayloadErrors == 0,
			ReceivedA: r.ReceivedA, ReceivedB: r.ReceivedB, PayloadErrors: r.PayloadErrors,
		},
		Runtime: record.CurrentRuntime(),
	}
}

func RunSpawn(cfg cli.Config) record.Spawn {
	r := bench.Spawn(cfg.Int("processes"))
	var bpp *float64
	if r.RSSBefore != nil && r.RSSAfter != nil {
		v := perUnit(float64(*r.RSSAfter-*r.RSSBefore), cfg.Int("processes"))
		bpp = &v
	}
	return record.Spawn{
		Benchmark: "spawn", Language: record.Language, Variant: cfg.Variant,
		Params: record.SpawnParams{Processes: cfg.Int("processes")},
		Metrics: record.SpawnMetrics{
			SpawnCallS:         r.SpawnCall.Seconds(),
			AllReadyS:          r.AllReady.Seconds(),
			RSSBytesBefore:     r.RSSBefore,
			RSSBytesAfter:      r.RSSAfter,
			BytesPerProcess:    bpp,
			RuntimeMemoryBytes: r.RuntimeMemoryBytes,
		},
		Validation: record.SpawnValidation{OK: r.Ready == cfg.Int("processes"), Ready: r.Ready},
		Runtime:    record.CurrentRuntime(),
	}
}

func RunThroughput(cfg cli.Config) record.Throughput {
	d := time.Duration(cfg.Float("duration_s") * float64(time.Second))
	r := bench.Throughput(int(cfg.Int("pairs")), int(cfg.Int("message_bytes")), d, cfg.Int("report_every"), cfg.Str("payload") == "copy")
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
		Params: record.ThroughputParams{Pairs: cfg.Int("pairs"), MessageBytes: cfg.Int("message_bytes"), DurationS: cfg.Float("duration_s"), ReportEvery: cfg.Int("report_every"), Payload: cfg.Str("payload")},
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
