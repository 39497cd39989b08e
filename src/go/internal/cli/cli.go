// Package cli parses the serverbench command line from spec/cli.json itself:
// scripts/build.sh (or `go generate ./internal/cli`) copies spec/cli.json next
// to this file before every build and test, and go:embed builds it into the
// binary. There is no flag table in Go: a flag, benchmark, role or variant
// added to cli.json is parsed here without a Go edit (spec_test.go fails when
// the copy is older than spec/cli.json).
package cli

//go:generate cp ../../../../spec/cli.json cli.json

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

//go:embed cli.json
var specJSON []byte

// SpecJSON is the embedded copy of spec/cli.json.
func SpecJSON() []byte { return specJSON }

// FlagSpec is one entry of benchmarks.<b>.flags (or .roles.<r>.flags).
type FlagSpec struct {
	Name         string          `json:"-"`
	Param        *string         `json:"param"`
	Type         string          `json:"type"` // int | number | enum
	Min          *json.Number    `json:"min"`
	Max          *json.Number    `json:"max"`
	MinExclusive *json.Number    `json:"min_exclusive"`
	Values       []string        `json:"values"`
	Required     bool            `json:"required"`
	Default      json.RawMessage `json:"default"`
}

// Flags of one sub-command.
type Flags map[string]*FlagSpec

// Benchmark is benchmarks.<b>: flags, or roles each with their own flags.
type Benchmark struct {
	Flags Flags `json:"flags"`
	Roles map[string]struct {
		Flags Flags `json:"flags"`
	} `json:"roles"`
}

// Language is languages.<lang>.
type Language struct {
	Benchmarks []string            `json:"benchmarks"`
	Variants   []string            `json:"variants"` // nil: implemented_variants
	Roles      map[string][]string `json:"roles"`    // benchmark -> roles; absent: all
}

// Spec is the part of spec/cli.json the parser reads.
type Spec struct {
	Languages           map[string]Language  `json:"languages"`
	Benchmarks          map[string]Benchmark `json:"benchmarks"`
	ImplementedVariants []string             `json:"implemented_variants"`
}

// LoadSpec decodes cli.json bytes, keeping numbers exact.
func LoadSpec(data []byte) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("cli.json: %w", err)
	}
	fill := func(fs Flags) {
		for n, f := range fs {
			f.Name = n
		}
	}
	for _, b := range s.Benchmarks {
		fill(b.Flags)
		for _, r := range b.Roles {
			fill(r.Flags)
		}
	}
	return &s, nil
}

// Embedded is the spec built into the binary.
var Embedded = mustLoad()

func mustLoad() *Spec {
	s, err := LoadSpec(specJSON)
	if err != nil {
		panic(err)
	}
	return s
}

// Markers mirror cli.json markers: byte 0 of every message is the sender's
// (spec_test.go checks them against the embedded cli.json).
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
type Config struct {
	Benchmark string
	Role      string // "" for benchmarks without roles
	Variant   string // value of the flag whose param is null (--variant), "" if none
	// Params maps each flag's param (cli.json) to its value: int64 for int,
	// float64 for number, string for enum. Defaults are filled in.
	Params map[string]any
}

// Int is an int flag's value by param name (panics if the spec has no such param).
func (c Config) Int(param string) int64 { return c.Params[param].(int64) }

// Float is a number flag's value by param name.
func (c Config) Float(param string) float64 { return c.Params[param].(float64) }

// Str is an enum flag's value by param name.
func (c Config) Str(param string) string { return c.Params[param].(string) }

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

// Parse reads args (without the program name) for language lang using the
// embedded spec.
func Parse(lang string, args []string) (Action, Config, error) {
	return Embedded.Parse(lang, args)
}

// Parse reads args (without the program name) for language lang.
func (s *Spec) Parse(lang string, args []string) (Action, Config, error) {
	var cfg Config
	l := s.Languages[lang]
	names := strings.Join(l.Benchmarks, ", ")
	if len(args) == 0 {
		return ActionRun, cfg, usagef("missing sub-command (expected one of: %s, --version, --help)", names)
	}
	switch args[0] {
	case "--version":
		if len(args) > 1 {
			return ActionRun, cfg, usagef("--version takes no value or arguments, got %q", args[1])
		}
		return ActionVersion, cfg, nil
	case "--help", "-h":
		return ActionHelp, cfg, nil
	}
	for _, a := range args[1:] {
		if a == "--help" || a == "-h" {
			return ActionHelp, cfg, nil
		}
	}
	bench, known := s.Benchmarks[args[0]]
	if !known {
		return ActionRun, cfg, usagef("unknown sub-command %q (expected one of: %s, --version, --help)", args[0], names)
	}
	cfg.Benchmark = args[0]
	if !contains(l.Benchmarks, cfg.Benchmark) {
		return ActionRun, cfg, usagef("%s does not implement the benchmark %s (it implements: %s)", lang, cfg.Benchmark, names)
	}
	flags, rest := bench.Flags, args[1:]
	if len(bench.Roles) > 0 {
		roles := sortedKeys(bench.Roles)
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return ActionRun, cfg, usagef("%s needs a role first: one of %s", cfg.Benchmark, strings.Join(roles, ", "))
		}
		r, ok := bench.Roles[rest[0]]
		if !ok {
			return ActionRun, cfg, usagef("unknown role %q for %s (expected one of: %s)", rest[0], cfg.Benchmark, strings.Join(roles, ", "))
		}
		if implemented, listed := l.Roles[cfg.Benchmark]; listed && !contains(implemented, rest[0]) {
			return ActionRun, cfg, usagef("%s does not implement the benchmark %s role %s (it implements: %s)", lang, cfg.Benchmark, rest[0], strings.Join(implemented, ", "))
		}
		cfg.Role, flags, rest = rest[0], r.Flags, rest[1:]
	}
	params, variant, err := parseFlags(cfg.Benchmark, flags, rest)
	if err != nil {
		return ActionRun, cfg, err
	}
	cfg.Params, cfg.Variant = params, variant
	if variant != "" {
		implemented := l.Variants
		if implemented == nil {
			implemented = s.ImplementedVariants
		}
		if !contains(implemented, variant) {
			return ActionRun, cfg, usagef("--variant %s is not implemented for %s %s (only: %s)", variant, lang, cfg.Benchmark, strings.Join(implemented, ", "))
		}
	}
	return ActionRun, cfg, nil
}

func parseFlags(bench string, flags Flags, rest []string) (map[string]any, string, error) {
	raw := map[string]string{}
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if !strings.HasPrefix(tok, "--") || tok == "--" {
			return nil, "", usagef("unexpected argument %q for %s (flags are --name value)", tok, bench)
		}
		name, val, hasEq := strings.Cut(tok, "=")
		if _, known := flags[name]; !known {
			return nil, "", usagef("unknown flag %s for %s", name, bench)
		}
		if _, dup := raw[name]; dup {
			return nil, "", usagef("%s given more than once", name)
		}
		if !hasEq {
			// A following "--flag" is never taken as this flag's value.
			if i+1 >= len(rest) || strings.HasPrefix(rest[i+1], "--") {
				return nil, "", usagef("%s needs a value", name)
			}
			i++
			val = rest[i]
		}
		if val == "" {
			return nil, "", usagef("%s needs a value", name)
		}
		raw[name] = val
	}
	params := map[string]any{}
	variant := ""
	for _, name := range sortedKeys(flags) {
		f := flags[name]
		val, given := raw[name]
		var v any
		var err error
		if given {
			v, err = f.check(val)
		} else if f.Required {
			err = usagef("missing required flag %s for %s", name, bench)
		} else {
			v, err = f.defaultValue()
		}
		if err != nil {
			return nil, "", err
		}
		if f.Param == nil {
			variant, _ = v.(string)
		} else if v != nil {
			params[*f.Param] = v
		}
	}
	return params, variant, nil
}

func (f *FlagSpec) defaultValue() (any, error) {
	if len(f.Default) == 0 || string(f.Default) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(f.Default, &s) == nil {
		return f.check(s)
	}
	return f.check(string(f.Default))
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

func bound(n *json.Number) *big.Rat {
	if n == nil {
		return nil
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		panic(fmt.Sprintf("cli.json: bad bound %s", n))
	}
	return r
}

// check converts a textual value; bounds are compared exactly (big.Rat).
func (f *FlagSpec) check(val string) (any, error) {
	lo, hi, loEx := bound(f.Min), bound(f.Max), bound(f.MinExclusive)
	inRange := func(v *big.Rat) bool {
		return (lo == nil || v.Cmp(lo) >= 0) && (hi == nil || v.Cmp(hi) <= 0) && (loEx == nil || v.Cmp(loEx) > 0)
	}
	switch f.Type {
	case "int":
		if !isDigits(val) {
			return nil, usagef("%s: %q is not a plain decimal integer", f.Name, val)
		}
		v, _ := new(big.Rat).SetString(val)
		if !inRange(v) || !v.Num().IsInt64() {
			return nil, usagef("%s: %s is out of range %s", f.Name, val, f.rangeText())
		}
		return v.Num().Int64(), nil
	case "number":
		if !isDecimal(val) {
			return nil, usagef("%s: %q is not a plain decimal number", f.Name, val)
		}
		v, _ := new(big.Rat).SetString("0" + strings.TrimSuffix(val, "."))
		x, _ := strconv.ParseFloat(val, 64)
		if !inRange(v) || math.IsInf(x, 0) {
			return nil, usagef("%s: %s is out of range %s", f.Name, val, f.rangeText())
		}
		return x, nil
	case "enum":
		if !contains(f.Values, val) {
			return nil, usagef("%s: %q is not one of %s", f.Name, val, strings.Join(f.Values, ", "))
		}
		return val, nil
	}
	return nil, usagef("%s: cli.json type %q is not supported by this program", f.Name, f.Type)
}

func (f *FlagSpec) rangeText() string {
	lo, open := "-inf", "("
	if f.Min != nil {
		lo, open = f.Min.String(), "["
	} else if f.MinExclusive != nil {
		lo = f.MinExclusive.String()
	}
	hi := "inf)"
	if f.Max != nil {
		hi = f.Max.String() + "]"
	}
	return open + lo + ", " + hi
}

// Usage is the --help text for language lang, generated from the spec.
func (s *Spec) Usage(lang string) string {
	var b strings.Builder
	b.WriteString("usage:\n")
	line := func(cmd string, flags Flags) {
		fmt.Fprintf(&b, "  serverbench %s", cmd)
		for _, n := range sortedKeys(flags) {
			f := flags[n]
			arg := strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(n, "--"), "-", "_"))
			if f.Type == "enum" {
				arg = strings.Join(f.Values, "|")
			}
			if f.Required {
				fmt.Fprintf(&b, " %s %s", n, arg)
			} else {
				fmt.Fprintf(&b, " [%s %s]", n, arg)
			}
		}
		b.WriteString("\n")
	}
	for _, name := range s.Languages[lang].Benchmarks {
		bench := s.Benchmarks[name]
		if len(bench.Roles) == 0 {
			line(name, bench.Flags)
			continue
		}
		for _, r := range sortedKeys(bench.Roles) {
			line(name+" "+r, bench.Roles[r].Flags)
		}
	}
	b.WriteString(`  serverbench --version
  serverbench --help

Flags are written --name value or --name=value, in any order, each at most once.
Prints one JSON record on stdout. Scheduler threads are set from outside: GOMAXPROCS=C.
Exit: 0 ok, 1 run failed (validation.ok false), 2 bad command line.
`)
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
