// Package cli parses the serverbench command line as spec/cli.json fixes it.
// The table below is hardcoded (the binary must not depend on a file at run
// time); cli_test.go reads spec/cli.json and fails if the two ever differ.
package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type Kind int

const (
	KindInt Kind = iota
	KindNumber
	KindEnum
)

// FlagSpec mirrors one entry of benchmarks.<name>.flags in spec/cli.json.
type FlagSpec struct {
	Name     string // "--message-bytes"
	Param    string // record params key; "" where cli.json says null
	Kind     Kind
	Min, Max int64   // KindInt: inclusive range
	MinExcl  float64 // KindNumber: value must be > MinExcl
	NumMax   float64 // KindNumber: value must be <= NumMax
	Values   []string
	Required bool
	Default  string // textual default, "" when Required
}

const (
	maxBytes = 67108864
)

var (
	flagMessageBytes = FlagSpec{Name: "--message-bytes", Param: "message_bytes", Kind: KindInt, Min: 1, Max: maxBytes, Required: true}
	flagPayload      = FlagSpec{Name: "--payload", Param: "payload", Kind: KindEnum, Values: []string{"copy", "share"}, Default: "copy"}
	flagVariant      = FlagSpec{Name: "--variant", Param: "", Kind: KindEnum, Values: []string{"fair", "paper"}, Default: "fair"}
)

// Benchmarks lists the sub-commands and their flags, in cli.json's order.
var Benchmarks = map[string][]FlagSpec{
	"pingping": {
		flagMessageBytes,
		{Name: "--repetitions", Param: "repetitions", Kind: KindInt, Min: 1, Max: 1000000000, Required: true},
		flagPayload,
		flagVariant,
	},
	"spawn": {
		{Name: "--processes", Param: "processes", Kind: KindInt, Min: 1, Max: 200000000, Required: true},
		flagVariant,
	},
	"throughput": {
		{Name: "--pairs", Param: "pairs", Kind: KindInt, Min: 1, Max: 1000000, Required: true},
		flagMessageBytes,
		{Name: "--duration-s", Param: "duration_s", Kind: KindNumber, MinExcl: 0, NumMax: 86400, Required: true},
		{Name: "--report-every", Param: "report_every", Kind: KindInt, Min: 1, Max: 1000000000, Default: "10000"},
		flagPayload,
		flagVariant,
	},
}

// BenchmarkNames in a fixed order, for messages.
var BenchmarkNames = []string{"pingping", "spawn", "throughput"}

// ImplementedVariants mirrors cli.json implemented_variants.
var ImplementedVariants = []string{"fair"}

// Markers mirror cli.json markers: byte 0 of every message is the sender's.
const (
	MarkerPingpingA        = 65
	MarkerPingpingB        = 66
	MarkerThroughputServer = 83
	MarkerThroughputClient = 67
)

// ThroughputSampleMinIntervalS mirrors cli.json throughput_sample_min_interval_s.
const ThroughputSampleMinIntervalS = 0.1

// Exit codes, as cli.json exit_codes.
const (
	ExitOK        = 0
	ExitRunFailed = 1
	ExitUsage     = 2
)

// Config is a parsed, range-checked command line for one benchmark.
// Fields that do not belong to the benchmark stay zero.
type Config struct {
	Benchmark    string
	MessageBytes int64
	Repetitions  int64
	Processes    int64
	Pairs        int64
	DurationS    float64
	ReportEvery  int64
	Payload      string
	Variant      string
}

// Action says what the command line asks for besides running a benchmark.
type Action int

const (
	ActionRun Action = iota
	ActionVersion
	ActionHelp
)

// UsageError is a bad command line: exit 2 with its message on stderr.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Usage is the --help text.
const Usage = `usage:
  serverbench pingping   --message-bytes B --repetitions R [--payload copy|share] [--variant fair|paper]
  serverbench spawn      --processes N [--variant fair|paper]
  serverbench throughput --pairs P --message-bytes B --duration-s T [--report-every K] [--payload copy|share] [--variant fair|paper]
  serverbench --version
  serverbench --help

Flags are written --name value or --name=value, in any order, each at most once.
Prints one JSON record on stdout. Scheduler threads are set from outside: GOMAXPROCS=C.
Exit: 0 ok, 1 run failed (validation.ok false), 2 bad command line.
`

// Parse reads args (without the program name).
func Parse(args []string) (Action, Config, error) {
	var cfg Config
	if len(args) == 0 {
		return ActionRun, cfg, usagef("missing sub-command (expected one of: %s, --version, --help)", strings.Join(BenchmarkNames, ", "))
	}
	switch args[0] {
	case "--version":
		if len(args) > 1 {
			return ActionRun, cfg, usagef("--version takes no arguments, got %q", args[1])
		}
		return ActionVersion, cfg, nil
	case "--help", "-h":
		return ActionHelp, cfg, nil
	}
	specs, ok := Benchmarks[args[0]]
	if !ok {
		return ActionRun, cfg, usagef("unknown sub-command %q (expected one of: %s, --version, --help)", args[0], strings.Join(BenchmarkNames, ", "))
	}
	cfg.Benchmark = args[0]
	byName := make(map[string]*FlagSpec, len(specs))
	for i := range specs {
		byName[specs[i].Name] = &specs[i]
	}
	raw := map[string]string{}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--help" || tok == "-h" {
			return ActionHelp, cfg, nil
		}
		if !strings.HasPrefix(tok, "--") || tok == "--" {
			return ActionRun, cfg, usagef("unexpected argument %q for %s (flags are --name value)", tok, cfg.Benchmark)
		}
		name, val, hasEq := strings.Cut(tok, "=")
		spec, known := byName[name]
		if !known {
			return ActionRun, cfg, usagef("unknown flag %s for %s", name, cfg.Benchmark)
		}
		if _, dup := raw[name]; dup {
			return ActionRun, cfg, usagef("%s given more than once", name)
		}
		if !hasEq {
			// A following "--flag" is never taken as this flag's value.
			if i+1 >= len(rest) || strings.HasPrefix(rest[i+1], "--") {
				return ActionRun, cfg, usagef("%s needs a value", name)
			}
			i++
			val = rest[i]
		}
		if val == "" {
			return ActionRun, cfg, usagef("%s needs a value", name)
		}
		if err := check(spec, val); err != nil {
			return ActionRun, cfg, err
		}
		raw[name] = val
	}
	for i := range specs {
		s := &specs[i]
		if _, ok := raw[s.Name]; !ok {
			if s.Required {
				return ActionRun, cfg, usagef("missing required flag %s for %s", s.Name, cfg.Benchmark)
			}
			raw[s.Name] = s.Default
		}
	}
	// Values were checked above, so the conversions below cannot fail.
	for name, val := range raw {
		switch name {
		case "--message-bytes":
			cfg.MessageBytes = mustInt(val)
		case "--repetitions":
			cfg.Repetitions = mustInt(val)
		case "--processes":
			cfg.Processes = mustInt(val)
		case "--pairs":
			cfg.Pairs = mustInt(val)
		case "--report-every":
			cfg.ReportEvery = mustInt(val)
		case "--duration-s":
			cfg.DurationS, _ = strconv.ParseFloat(val, 64)
		case "--payload":
			cfg.Payload = val
		case "--variant":
			cfg.Variant = val
		}
	}
	if !contains(ImplementedVariants, cfg.Variant) {
		return ActionRun, cfg, usagef("--variant %s is not implemented yet (only: %s)", cfg.Variant, strings.Join(ImplementedVariants, ", "))
	}
	return ActionRun, cfg, nil
}

func mustInt(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDecimal accepts 60, 0.5, .5 and 5. : digits with at most one point, no
// sign or exponent, so nan, inf and 1e3 are refused.
func isDecimal(s string) bool {
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return false
	}
	return (intPart == "" || isDigits(intPart)) && (frac == "" || isDigits(frac))
}

func check(s *FlagSpec, val string) error {
	switch s.Kind {
	case KindInt:
		if !isDigits(val) {
			return usagef("%s: %q is not a plain decimal integer", s.Name, val)
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < s.Min || v > s.Max { // err: too many digits for int64, so above max
			return usagef("%s: %s is out of range [%d, %d]", s.Name, val, s.Min, s.Max)
		}
	case KindNumber:
		if !isDecimal(val) {
			return usagef("%s: %q is not a plain decimal number", s.Name, val)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !(v > s.MinExcl) || v > s.NumMax {
			return usagef("%s: %s is out of range (%g, %g]", s.Name, val, s.MinExcl, s.NumMax)
		}
	case KindEnum:
		if !contains(s.Values, val) {
			return usagef("%s: %q is not one of %s", s.Name, val, strings.Join(s.Values, ", "))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
