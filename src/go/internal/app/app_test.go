package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"serverbench/internal/cli"
	"serverbench/internal/jsonschema"
	"serverbench/internal/spectest"
)

type flagContract = spectest.Flag
type contract = spectest.CLI

func specDir(t *testing.T) string        { return spectest.Dir(t) }
func loadContract(t *testing.T) contract { return spectest.LoadCLI(t) }

func loadSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.Load(filepath.Join(specDir(t), "native-record.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// safeValue is a valid, cheap value for a required flag, so that a reject
// case that were wrongly accepted would still finish quickly.
func safeValue(f flagContract) string {
	if f.Type == "number" {
		return "0.01"
	}
	return f.Min.String()
}

type badCase struct {
	args []string
	name string // what the error line must mention
}

// badCases derives, from spec/cli.json alone, every command line the
// contract says must be refused with exit 2.
func badCases(c contract) []badCase {
	var cases []badCase
	var benches []string
	for b := range c.Benchmarks {
		benches = append(benches, b)
	}
	sort.Strings(benches)
	for _, bench := range benches {
		flags := c.Benchmarks[bench].Flags
		var names []string
		for n := range flags {
			names = append(names, n)
		}
		sort.Strings(names)
		// with builds a command line from the required flags, replacing or
		// dropping one flag and appending extra tokens.
		with := func(skip string, extra ...string) []string {
			args := []string{bench}
			for _, n := range names {
				if n != skip && flags[n].Required {
					args = append(args, n, safeValue(flags[n]))
				}
			}
			return append(args, extra...)
		}
		for _, n := range names {
			f := flags[n]
			var bad []string
			switch f.Type {
			case "int":
				max, _ := f.Max.Int64()
				bad = []string{"0", "-1", "-0", "abc", "1.5", "1e3", "+1", " 1", "1_000", "0x10", itoa(max + 1), "99999999999999999999999"}
			case "number":
				maxf, _ := f.Max.Float64()
				bad = []string{"0", "0.0", "-1", "-0.5", "abc", "nan", "NaN", "inf", "+Inf", "1e3", "0x1p3", ftoa(maxf + 1), ftoa(maxf) + ".5"}
			case "enum":
				bad = []string{"bogus", "COPY", "1"}
				for _, v := range f.Values {
					if n == "--variant" && !contains(c.ImplementedVariants, v) {
						bad = append(bad, v) // known but not built: refused with exit 2
					}
				}
			}
			for _, v := range bad {
				cases = append(cases, badCase{with(n, n, v), n}, badCase{with(n, n+"="+v), n})
			}
			var good string
			if f.Type == "enum" {
				good = f.Values[0]
			} else {
				good = safeValue(f)
			}
			cases = append(cases,
				badCase{with(n, n), n},                                 // missing value at the end
				badCase{with(n, n+"="), n},                             // empty value
				badCase{append([]string{bench, n}, with(n)[1:]...), n}, // value swallowed by the next flag
				badCase{with(n, n, good, n, good), n},                  // duplicate
				badCase{with(n, n+"="+good, n, good), n},
			)
			if f.Required {
				cases = append(cases, badCase{with(n), n}) // missing required flag
			}
		}
		cases = append(cases,
			badCase{with("", "--bogus", "1"), "--bogus"},
			badCase{with("", "--bogus=1"), "--bogus"},
			badCase{with("", "-x"), "-x"},
			badCase{with("", "extra"), "extra"},
		)
	}
	cases = append(cases,
		badCase{[]string{"pingpong", "--message-bytes", "1"}, "pingpong"},
		badCase{[]string{"PINGPING"}, "PINGPING"},
		badCase{[]string{}, "sub-command"},
		badCase{[]string{"--bogus"}, "--bogus"},
	)
	return cases
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestUsageErrors runs every refused command line in-process: exit 2, one
// "error: ..." line naming the flag on stderr, nothing on stdout.
func TestUsageErrors(t *testing.T) {
	c := loadContract(t)
	usage := c.ExitCodes["usage"]
	cases := badCases(c)
	if len(cases) < 100 {
		t.Fatalf("only %d cases derived from cli.json", len(cases))
	}
	for _, bc := range cases {
		// Never run a benchmark here: a wrongly accepted line (for example a
		// range check lost) would start a run with a huge value.
		if _, _, err := cli.Parse(bc.args); err == nil {
			t.Errorf("%q: accepted, want exit %d", bc.args, usage)
			continue
		}
		code, out, errs := run(bc.args...)
		if code != usage || out != "" || !strings.HasPrefix(errs, "error: ") ||
			strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") || !strings.Contains(errs, bc.name) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q (want exit %d, one error line naming %s)", bc.args, code, out, errs, usage, bc.name)
		}
	}
}

func TestVariantPaperMessage(t *testing.T) {
	code, out, errs := run("spawn", "--processes", "1", "--variant", "paper")
	want := "error: --variant paper is not implemented yet (only: fair)\n"
	if code != 2 || out != "" || errs != want {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
}

// oneRecord checks the stdout discipline and returns the decoded record.
func oneRecord(t *testing.T, s *jsonschema.Schema, out string) map[string]any {
	t.Helper()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout is not exactly one line: %q", out)
	}
	v, err := jsonschema.Decode([]byte(out))
	if err != nil {
		t.Fatalf("stdout is not one JSON value: %v", err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("record does not validate: %v\n%s", err, out)
	}
	return v.(map[string]any)
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v
}

func integer(t *testing.T, v any) int64 {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPingpingRecord(t *testing.T) {
	s := loadSchema(t)
	for _, payload := range []string{"copy", "share"} {
		for _, b := range []string{"1", "2", "5000"} {
			code, out, errs := run("pingping", "--message-bytes", b, "--repetitions", "2000", "--payload", payload)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			m := oneRecord(t, s, out)
			if integer(t, field(m, "metrics", "messages")) != 4000 ||
				integer(t, field(m, "validation", "received_a")) != 2000 ||
				integer(t, field(m, "validation", "received_b")) != 2000 ||
				integer(t, field(m, "validation", "payload_errors")) != 0 ||
				field(m, "validation", "ok") != true || field(m, "params", "payload") != payload ||
				field(m, "language") != "go" || field(m, "variant") != "fair" {
				t.Errorf("unexpected record %s", out)
			}
			if integer(t, field(m, "runtime", "schedulers")) != int64(runtime.GOMAXPROCS(0)) {
				t.Errorf("schedulers not GOMAXPROCS: %s", out)
			}
		}
	}
	// R = 1: each side sends only the first message.
	code, out, _ := run("pingping", "--message-bytes=3", "--repetitions=1")
	m := oneRecord(t, s, out)
	if code != 0 || integer(t, field(m, "metrics", "messages")) != 2 {
		t.Errorf("R=1: exit %d %s", code, out)
	}
}

func TestSpawnRecord(t *testing.T) {
	s := loadSchema(t)
	code, out, errs := run("spawn", "--processes", "5000")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	m := oneRecord(t, s, out)
	if integer(t, field(m, "validation", "ready")) != 5000 || field(m, "validation", "ok") != true {
		t.Errorf("unexpected record %s", out)
	}
	if runtime.GOOS == "linux" {
		for _, k := range []string{"rss_bytes_before", "rss_bytes_after", "bytes_per_process", "runtime_memory_bytes"} {
			if field(m, "metrics", k) == nil {
				t.Errorf("%s is null on linux", k)
			}
		}
	}
	spawnCall, _ := field(m, "metrics", "spawn_call_s").(json.Number).Float64()
	allReady, _ := field(m, "metrics", "all_ready_s").(json.Number).Float64()
	if spawnCall > allReady {
		t.Errorf("spawn_call_s %v > all_ready_s %v", spawnCall, allReady)
	}
}

func TestThroughputRecord(t *testing.T) {
	s := loadSchema(t)
	for _, payload := range []string{"copy", "share"} {
		code, out, errs := run("throughput", "--pairs", "3", "--message-bytes", "500", "--duration-s", "0.25", "--report-every", "100", "--payload", payload)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		m := oneRecord(t, s, out)
		rep := integer(t, field(m, "validation", "reported_exchanges"))
		if rep <= 0 || rep != integer(t, field(m, "validation", "counted_exchanges")) ||
			rep != integer(t, field(m, "metrics", "exchanges")) ||
			integer(t, field(m, "validation", "min_pair_exchanges")) < 1 ||
			integer(t, field(m, "validation", "payload_errors")) != 0 || field(m, "validation", "ok") != true {
			t.Errorf("unexpected record %s", out)
		}
		samples := field(m, "metrics", "samples").([]any)
		if len(samples) < 2 {
			t.Fatalf("expected >= 2 samples in 0.25 s, got %s", out)
		}
		last := samples[len(samples)-1].([]any)
		if integer(t, last[1]) != rep {
			t.Errorf("final sample %v != exchanges %d", last, rep)
		}
		elapsed, _ := field(m, "metrics", "elapsed_s").(json.Number).Float64()
		if elapsed < 0.25 {
			t.Errorf("elapsed %v shorter than the duration", elapsed)
		}
		prev := -1.0
		for _, sm := range samples {
			ts, _ := sm.([]any)[0].(json.Number).Float64()
			if ts < prev {
				t.Errorf("samples not in time order: %v", samples)
			}
			prev = ts
		}
	}
	// K larger than any pair's count: only remainders are reported.
	code, out, _ := run("throughput", "--pairs", "2", "--message-bytes", "1", "--duration-s", "0.05", "--report-every", "1000000000")
	m := oneRecord(t, s, out)
	if code != 0 || integer(t, field(m, "metrics", "exchanges")) != integer(t, field(m, "validation", "counted_exchanges")) {
		t.Errorf("remainder-only run: exit %d %s", code, out)
	}
}

func TestVersion(t *testing.T) {
	s := loadSchema(t)
	code, out, errs := run("--version")
	if code != 0 || errs != "" || strings.Count(out, "\n") != 1 {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	v, err := jsonschema.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateDef("version_info", v); err != nil {
		t.Fatal(err)
	}
	if field(v.(map[string]any), "language") != "go" {
		t.Errorf("language: %s", out)
	}
}

func TestHelp(t *testing.T) {
	code, out, errs := run("--help")
	if code != 0 || errs != "" || !strings.Contains(out, "throughput") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
}

// TestBinary builds the real binary and runs it as a separate process, as the
// harness does: exit codes, stdout and stderr of the executable itself.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("go tool not found")
		}
	}
	exe := filepath.Join(t.TempDir(), "serverbench")
	build := exec.Command(goTool, "build", "-o", exe, "serverbench/cmd/serverbench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := loadSchema(t)
	exec1 := func(env []string, args ...string) (int, string, string) {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	code, out, errs := exec1([]string{"GOMAXPROCS=1"}, "pingping", "--repetitions=100", "--message-bytes", "64")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	m := oneRecord(t, s, out)
	if integer(t, field(m, "runtime", "schedulers")) != 1 {
		t.Errorf("GOMAXPROCS=1 not reported: %s", out)
	}
	code, out, _ = exec1(nil, "spawn", "--processes", "1000")
	if code != 0 {
		t.Fatalf("spawn exit %d", code)
	}
	oneRecord(t, s, out)
	code, out, _ = exec1(nil, "throughput", "--pairs", "1", "--message-bytes", "10", "--duration-s", "0.05")
	if code != 0 {
		t.Fatalf("throughput exit %d", code)
	}
	oneRecord(t, s, out)
	code, out, errs = exec1(nil, "pingping", "--message-bytes", "0", "--repetitions", "1")
	if code != 2 || out != "" || !strings.HasPrefix(errs, "error: ") || !strings.Contains(errs, "--message-bytes") || strings.Count(errs, "\n") != 1 {
		t.Errorf("bad flag: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, _ = exec1(nil, "--version")
	v, err := jsonschema.Decode([]byte(out))
	if code != 0 || err != nil {
		t.Fatalf("--version: exit %d %v", code, err)
	}
	if err := s.ValidateDef("version_info", v); err != nil {
		t.Error(err)
	}
}
