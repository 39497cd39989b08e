package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"serverbench/internal/spectest"
)

// TestEmbeddedIsCurrent: the copy built into the binary is spec/cli.json as it
// is now (scripts/build.sh refreshes it; a stale copy fails here).
func TestEmbeddedIsCurrent(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(spectest.Dir(t), "cli.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, SpecJSON()) {
		t.Fatal("internal/cli/cli.json differs from spec/cli.json: run scripts/build.sh go (or go generate ./internal/cli)")
	}
}

// TestConstantsMatchContract: the few constants the benchmarks use as Go
// constants (markers, sample interval, exit codes) are cli.json's.
func TestConstantsMatchContract(t *testing.T) {
	c := spectest.LoadCLI(t)
	want := map[string]int{"pingping_a": MarkerPingpingA, "pingping_b": MarkerPingpingB,
		"throughput_server": MarkerThroughputServer, "throughput_client": MarkerThroughputClient}
	for k, v := range want {
		if got, _ := c.Markers[k].(interface{ String() string }); got == nil || got.String() != strconv.Itoa(v) {
			t.Errorf("marker %s: cli.json %v, Go %d", k, c.Markers[k], v)
		}
	}
	if c.SampleInterval != ThroughputSampleMinIntervalS {
		t.Errorf("sample interval: cli.json %v, Go %v", c.SampleInterval, ThroughputSampleMinIntervalS)
	}
	if c.ExitCodes["ok"] != ExitOK || c.ExitCodes["run_failed"] != ExitRunFailed || c.ExitCodes["usage"] != ExitUsage {
		t.Errorf("exit codes: %v", c.ExitCodes)
	}
}

// A made-up spec exercising what the real one does not (yet): roles, a
// language restricted to some roles and variants, bounds of each kind.
const testSpec = `{
 "languages": {
  "l1": {"benchmarks": ["b", "sock"], "variants": ["fair", "paper"], "roles": {"sock": ["server"]}},
  "l2": {"benchmarks": ["b"]}
 },
 "benchmarks": {
  "b": {"flags": {
    "--n":       {"param": "n", "type": "int", "min": 1, "max": 9223372036854775807, "required": true},
    "--t":       {"param": "t", "type": "number", "min_exclusive": 0, "max": 0.5, "default": 0.25},
    "--k":       {"param": "k", "type": "int", "min": 2, "max": 5, "default": 3},
    "--variant": {"param": null, "type": "enum", "values": ["fair", "paper"], "default": "fair"}}},
  "sock": {"roles": {
    "server": {"flags": {"--port": {"param": "port", "type": "int", "min": 0, "max": 65535, "required": true}}},
    "client": {"flags": {"--port": {"param": "port", "type": "int", "min": 1, "max": 65535, "required": true}}}}}
 },
 "implemented_variants": ["fair"]
}`

func TestParseFromSpec(t *testing.T) {
	s, err := LoadSpec([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	ok := func(lang string, args ...string) Config {
		t.Helper()
		a, cfg, err := s.Parse(lang, args)
		if err != nil || a != ActionRun {
			t.Fatalf("%s %v: %v", lang, args, err)
		}
		return cfg
	}
	bad := func(want, lang string, args ...string) {
		t.Helper()
		if _, _, err := s.Parse(lang, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %v: error %v, want one mentioning %q", lang, args, err, want)
		}
	}
	cfg := ok("l1", "b", "--n", "9223372036854775807", "--t=.5", "--variant", "paper")
	if cfg.Int("n") != 9223372036854775807 || cfg.Float("t") != 0.5 || cfg.Int("k") != 3 || cfg.Variant != "paper" || cfg.Role != "" {
		t.Errorf("parsed %+v", cfg)
	}
	if _, has := cfg.Params["variant"]; has {
		t.Errorf("a null-param flag must not be a param: %+v", cfg.Params)
	}
	if cfg := ok("l2", "b", "--n", "01"); cfg.Float("t") != 0.25 || cfg.Int("n") != 1 || cfg.Variant != "fair" {
		t.Errorf("defaults: %+v", cfg)
	}
	bad("9223372036854775808", "l1", "b", "--n", "9223372036854775808")
	bad("--t", "l1", "b", "--n", "1", "--t", "0")
	bad("--t", "l1", "b", "--n", "1", "--t", "0.5000001")
	bad("--k", "l1", "b", "--n", "1", "--k", "6")
	bad("paper", "l2", "b", "--n", "1", "--variant", "paper") // l2: implemented_variants
	bad("missing required flag --n", "l1", "b")
	bad("l2 does not implement the benchmark sock", "l2", "sock", "server", "--port", "0")
	if cfg := ok("l1", "sock", "server", "--port", "0"); cfg.Role != "server" || cfg.Int("port") != 0 || cfg.Variant != "" {
		t.Errorf("role: %+v", cfg)
	}
	bad("role client", "l1", "sock", "client", "--port", "1")
	bad("needs a role", "l1", "sock", "--port", "1")
	bad("unknown role", "l1", "sock", "peer")
	bad("unknown flag --n", "l1", "sock", "server", "--n", "1")
	bad("unknown sub-command", "l1", "nope")
	bad("--version takes no value", "l1", "--version", "x")
}

func TestUsageListsEveryFlag(t *testing.T) {
	u := Embedded.Usage("go")
	for _, b := range Embedded.Languages["go"].Benchmarks {
		bench := Embedded.Benchmarks[b]
		for n := range bench.Flags {
			if !strings.Contains(u, n) {
				t.Errorf("usage lacks %s %s", b, n)
			}
		}
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
