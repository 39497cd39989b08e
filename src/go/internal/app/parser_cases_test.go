package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"serverbench/internal/cli"
	"serverbench/internal/record"
	"serverbench/internal/spectest"
)

// TestParserCases runs tests/conformance/parser-cases.json in process through
// Accept, which is Run up to the start of a benchmark: a command line Accept
// lets through is reported, never run (no process, socket or benchmark).
func TestParserCases(t *testing.T) {
	cases := spectest.LoadParserCases(t)
	lang, ok := cases.Languages[record.Language]
	if !ok {
		t.Fatalf("tests/conformance/parser-cases.json has no cases for %s", record.Language)
	}
	if len(lang.Usage) == 0 || len(lang.Valid) == 0 {
		t.Fatalf("%s: %d usage and %d valid cases; expected some of each", record.Language, len(lang.Usage), len(lang.Valid))
	}
	if cases.ExitCodes["usage"] != cli.ExitUsage || cases.ExitCodes["ok"] != cli.ExitOK {
		t.Fatalf("exit codes %v, Go has usage %d ok %d", cases.ExitCodes, cli.ExitUsage, cli.ExitOK)
	}

	var failures []string
	fail := func(args []string, format string, a ...any) {
		failures = append(failures, fmt.Sprintf("%q: %s", args, fmt.Sprintf(format, a...)))
	}
	for _, c := range lang.Usage {
		var out, errb bytes.Buffer
		r, _, code := Accept(c.Args, &out, &errb)
		if r != nil {
			fail(c.Args, "accepted (would start the benchmark), want a usage error naming %q", c.Mentions)
			continue
		}
		if code != cases.ExitCodes["usage"] {
			fail(c.Args, "exit %d, want %d; stderr %q", code, cases.ExitCodes["usage"], errb.String())
		}
		if out.Len() != 0 {
			fail(c.Args, "stdout %q, want nothing", out.String())
		}
		lines := nonBlankLines(errb.String())
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
			fail(c.Args, "stderr %q, want one line starting \"error: \"", errb.String())
			continue
		}
		for _, m := range c.Mentions {
			if !strings.Contains(lines[0], m) {
				fail(c.Args, "error line %q does not name %q", lines[0], m)
			}
		}
	}
	for _, c := range lang.Valid {
		var out, errb bytes.Buffer
		r, cfg, code := Accept(c.Args, &out, &errb)
		if r == nil {
			fail(c.Args, "refused (exit %d, stderr %q), want accepted", code, errb.String())
			continue
		}
		if out.Len() != 0 || errb.Len() != 0 {
			fail(c.Args, "wrote stdout %q stderr %q before the run", out.String(), errb.String())
		}
		if cfg.Benchmark != c.Benchmark {
			fail(c.Args, "benchmark %q, want %q", cfg.Benchmark, c.Benchmark)
		}
		if c.Variant != nil && cfg.Variant != *c.Variant {
			fail(c.Args, "variant %q, want %q", cfg.Variant, *c.Variant)
		}
		if c.Variant == nil || *c.Variant == "fair" {
			if diff := paramsDiff(recordParams(cfg), c.Params); diff != "" {
				fail(c.Args, "params: %s", diff)
			}
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d usage and %d valid cases for %s fail:\n%s", len(failures), len(lang.Usage), len(lang.Valid),
			record.Language, strings.Join(failures, "\n"))
	}
	t.Logf("%s: %d usage and %d valid cases checked", record.Language, len(lang.Usage), len(lang.Valid))
}

func nonBlankLines(s string) []string {
	var lines []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// recordParams is what the record's params would hold for cfg: a knob param
// left at "variant" is not written (given, paper.go).
func recordParams(cfg cli.Config) map[string]any {
	p := map[string]any{}
	for k, v := range cfg.Params {
		if v != "variant" {
			p[k] = v
		}
	}
	return p
}

// paramsDiff compares parsed params with a case's, numbers by value: int64
// exactly, float64 within a relative 1e-9. "" when they are equal.
func paramsDiff(got, want map[string]any) string {
	var diffs []string
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	for k := range keys {
		g, inGot := got[k]
		w, inWant := want[k]
		switch {
		case !inGot:
			diffs = append(diffs, fmt.Sprintf("%s missing, want %v", k, w))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%s = %v not expected", k, g))
		case !sameValue(g, w):
			diffs = append(diffs, fmt.Sprintf("%s = %v (%T), want %v", k, g, g, w))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func sameValue(got, want any) bool {
	n, isNum := want.(json.Number)
	switch g := got.(type) {
	case int64:
		w, err := n.Int64()
		return isNum && err == nil && g == w
	case float64:
		w, err := n.Float64()
		return isNum && err == nil && (g == w || math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w)))
	case string:
		return got == want
	}
	return false
}
