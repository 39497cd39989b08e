package cli

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"serverbench/internal/spectest"
)

// contract is spec/cli.json, read once for every Go test package.
type contract = spectest.CLI

func loadContract(t *testing.T) contract { return spectest.LoadCLI(t) }

func numInt(t *testing.T, n *json.Number) int64 {
	t.Helper()
	v, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func numFloat(t *testing.T, n *json.Number) float64 {
	t.Helper()
	v, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTableMatchesContract: the hardcoded table is exactly spec/cli.json.
func TestTableMatchesContract(t *testing.T) {
	c := loadContract(t)
	var names []string
	for name := range c.Benchmarks {
		names = append(names, name)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, BenchmarkNames) {
		t.Fatalf("benchmarks %v, contract has %v", BenchmarkNames, names)
	}
	for bench, b := range c.Benchmarks {
		specs := Benchmarks[bench]
		if len(specs) != len(b.Flags) {
			t.Errorf("%s: %d flags, contract has %d", bench, len(specs), len(b.Flags))
		}
		for _, s := range specs {
			f, ok := b.Flags[s.Name]
			if !ok {
				t.Errorf("%s: flag %s not in contract", bench, s.Name)
				continue
			}
			param := ""
			if f.Param != nil {
				param = *f.Param
			}
			if s.Param != param {
				t.Errorf("%s %s: param %q, contract %q", bench, s.Name, s.Param, param)
			}
			if s.Required != f.Required {
				t.Errorf("%s %s: required %v, contract %v", bench, s.Name, s.Required, f.Required)
			}
			def := ""
			if len(f.Default) > 0 {
				var str string
				if json.Unmarshal(f.Default, &str) == nil {
					def = str
				} else {
					def = string(f.Default)
				}
			}
			if s.Default != def {
				t.Errorf("%s %s: default %q, contract %q", bench, s.Name, s.Default, def)
			}
			switch f.Type {
			case "int":
				if s.Kind != KindInt || s.Min != numInt(t, f.Min) || s.Max != numInt(t, f.Max) {
					t.Errorf("%s %s: int range [%d,%d], contract %v..%v", bench, s.Name, s.Min, s.Max, *f.Min, *f.Max)
				}
			case "number":
				if s.Kind != KindNumber || s.MinExcl != numFloat(t, f.MinExclusive) || s.NumMax != numFloat(t, f.Max) || f.Min != nil {
					t.Errorf("%s %s: number range (%g,%g], contract %+v", bench, s.Name, s.MinExcl, s.NumMax, f)
				}
			case "enum":
				if s.Kind != KindEnum || !reflect.DeepEqual(s.Values, f.Values) {
					t.Errorf("%s %s: values %v, contract %v", bench, s.Name, s.Values, f.Values)
				}
			default:
				t.Errorf("%s %s: unknown type %q in contract", bench, s.Name, f.Type)
			}
		}
	}
	if !reflect.DeepEqual(ImplementedVariants, c.ImplementedVariants) {
		t.Errorf("implemented variants %v, contract %v", ImplementedVariants, c.ImplementedVariants)
	}
	markers := map[string]int{"pingping_a": MarkerPingpingA, "pingping_b": MarkerPingpingB,
		"throughput_server": MarkerThroughputServer, "throughput_client": MarkerThroughputClient}
	for k, v := range markers {
		n, ok := c.Markers[k].(json.Number)
		if !ok || n.String() != strconv.Itoa(v) {
			t.Errorf("marker %s = %d, contract %v", k, v, c.Markers[k])
		}
	}
	if c.SampleInterval != ThroughputSampleMinIntervalS {
		t.Errorf("sample interval %v, contract %v", ThroughputSampleMinIntervalS, c.SampleInterval)
	}
	want := map[string]int{"ok": ExitOK, "run_failed": ExitRunFailed, "usage": ExitUsage}
	if !reflect.DeepEqual(want, c.ExitCodes) {
		t.Errorf("exit codes %v, contract %v", want, c.ExitCodes)
	}
	if _, ok := c.Languages["go"]; !ok {
		t.Errorf("contract has no go language entry")
	}
}

// value returns the Config field that holds a params key.
func value(cfg Config, param string) string {
	switch param {
	case "message_bytes":
		return strconv.FormatInt(cfg.MessageBytes, 10)
	case "repetitions":
		return strconv.FormatInt(cfg.Repetitions, 10)
	case "processes":
		return strconv.FormatInt(cfg.Processes, 10)
	case "pairs":
		return strconv.FormatInt(cfg.Pairs, 10)
	case "report_every":
		return strconv.FormatInt(cfg.ReportEvery, 10)
	case "duration_s":
		return strconv.FormatFloat(cfg.DurationS, 'g', -1, 64)
	case "payload":
		return cfg.Payload
	case "":
		return cfg.Variant
	}
	return "?"
}

// TestAcceptsPerContract: boundary values, both spellings, any order, and
// defaults, all derived from spec/cli.json.
func TestAcceptsPerContract(t *testing.T) {
	c := loadContract(t)
	for bench, b := range c.Benchmarks {
		base := map[string]string{}
		for name, f := range b.Flags {
			if f.Required {
				switch f.Type {
				case "int":
					base[name] = f.Min.String()
				case "number":
					base[name] = "1"
				}
			}
		}
		for name, f := range b.Flags {
			var good []string
			switch f.Type {
			case "int":
				good = []string{f.Min.String(), f.Max.String(), "0" + f.Min.String()}
			case "number":
				good = []string{f.Max.String(), "0.001", ".5", "60"}
			case "enum":
				for _, v := range f.Values {
					if contains(c.ImplementedVariants, v) || name != "--variant" {
						good = append(good, v)
					}
				}
			}
			param := ""
			if f.Param != nil {
				param = *f.Param
			}
			for _, g := range good {
				for _, eq := range []bool{false, true} {
					args := []string{bench}
					if eq {
						args = append(args, name+"="+g)
					} else {
						args = append(args, name, g)
					}
					for n, v := range base {
						if n != name {
							args = append(args, n, v)
						}
					}
					_, cfg, err := Parse(args)
					if err != nil {
						t.Errorf("%v rejected: %v", args, err)
						continue
					}
					wantV := g
					if f.Type == "int" {
						iv, _ := strconv.ParseInt(g, 10, 64)
						wantV = strconv.FormatInt(iv, 10)
					} else if f.Type == "number" {
						fv, _ := strconv.ParseFloat(g, 64)
						wantV = strconv.FormatFloat(fv, 'g', -1, 64)
					}
					if got := value(cfg, param); got != wantV {
						t.Errorf("%v: %s parsed as %s, want %s", args, name, got, wantV)
					}
				}
			}
			// Defaults apply when an optional flag is left out.
			if !f.Required {
				args := []string{bench}
				for n, v := range base {
					args = append(args, n, v)
				}
				_, cfg, err := Parse(args)
				if err != nil {
					t.Fatalf("%v rejected: %v", args, err)
				}
				var def string
				if json.Unmarshal(f.Default, &def) != nil {
					def = string(f.Default)
				}
				if got := value(cfg, param); got != def {
					t.Errorf("%s %s default: got %s, want %s", bench, name, got, def)
				}
			}
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	if a, _, err := Parse([]string{"--version"}); err != nil || a != ActionVersion {
		t.Errorf("--version: %v %v", a, err)
	}
	if a, _, err := Parse([]string{"--help"}); err != nil || a != ActionHelp {
		t.Errorf("--help: %v %v", a, err)
	}
	if _, _, err := Parse([]string{"--version", "x"}); err == nil {
		t.Errorf("--version with an argument accepted")
	}
}

func TestDecimalSyntax(t *testing.T) {
	for _, s := range []string{"0", "1", "0.5", ".5", "5.", "86400"} {
		if !isDecimal(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", ".", "-1", "+1", "1e3", "nan", "inf", "Inf", "0x10", "1.2.3", " 1", "1_0"} {
		if isDecimal(s) {
			t.Errorf("%q accepted", s)
		}
	}
}
