package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"serverbench/internal/cli"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestEveryListedBenchmarkIsBuilt: each benchmark (and role) cli.json lists
// for go has a runner; the records themselves are checked against the schema
// by tests/python/conformance.
func TestEveryListedBenchmarkIsBuilt(t *testing.T) {
	for _, b := range cli.Embedded.Languages["go"].Benchmarks {
		bench := cli.Embedded.Benchmarks[b]
		if len(bench.Roles) == 0 {
			if !Registered(b, "") {
				t.Errorf("%s: listed for go in cli.json, no runner registered", b)
			}
			continue
		}
		roles, listed := cli.Embedded.Languages["go"].Roles[b]
		if !listed {
			for r := range bench.Roles {
				roles = append(roles, r)
			}
		}
		for _, r := range roles {
			if !Registered(b, r) {
				t.Errorf("%s %s: listed for go in cli.json, no runner registered", b, r)
			}
		}
	}
}

func TestUsageError(t *testing.T) {
	// A knob value that contradicts the variant (paper.go): refused, nothing run.
	code, out, errs := run("spawn", "--processes", "1", "--variant", "fair", "--timer", "spawn_call")
	want := "error: --timer spawn_call contradicts --variant fair (fair means all_ready; use --variant mixed)\n"
	if code != 2 || out != "" || errs != want {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
}

// oneRecord checks the stdout discipline and returns the decoded record.
func oneRecord(t *testing.T, out string) map[string]any {
	t.Helper()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout is not exactly one line: %q", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	return v
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
	for _, payload := range []string{"copy", "share"} {
		for _, b := range []string{"1", "2", "5000"} {
			code, out, errs := run("pingping", "--message-bytes", b, "--repetitions", "2000", "--payload", payload)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			m := oneRecord(t, out)
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
	m := oneRecord(t, out)
	if code != 0 || integer(t, field(m, "metrics", "messages")) != 2 {
		t.Errorf("R=1: exit %d %s", code, out)
	}
}

func TestSpawnRecord(t *testing.T) {
	code, out, errs := run("spawn", "--processes", "5000")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	m := oneRecord(t, out)
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
	for _, payload := range []string{"copy", "share"} {
		code, out, errs := run("throughput", "--pairs", "3", "--message-bytes", "500", "--duration-s", "0.25", "--report-every", "100", "--payload", payload)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		m := oneRecord(t, out)
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
	m := oneRecord(t, out)
	if code != 0 || integer(t, field(m, "metrics", "exchanges")) != integer(t, field(m, "validation", "counted_exchanges")) {
		t.Errorf("remainder-only run: exit %d %s", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, errs := run("--version")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if oneRecord(t, out)["language"] != "go" {
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
	m := oneRecord(t, out)
	if integer(t, field(m, "runtime", "schedulers")) != 1 {
		t.Errorf("GOMAXPROCS=1 not reported: %s", out)
	}
	code, out, _ = exec1(nil, "spawn", "--processes", "1000")
	if code != 0 {
		t.Fatalf("spawn exit %d", code)
	}
	oneRecord(t, out)
	code, out, _ = exec1(nil, "throughput", "--pairs", "1", "--message-bytes", "10", "--duration-s", "0.05")
	if code != 0 {
		t.Fatalf("throughput exit %d", code)
	}
	oneRecord(t, out)
	code, out, errs = exec1(nil, "pingping", "--message-bytes", "0", "--repetitions", "1")
	if code != 2 || out != "" || !strings.HasPrefix(errs, "error: ") || !strings.Contains(errs, "--message-bytes") || strings.Count(errs, "\n") != 1 {
		t.Errorf("bad flag: exit %d stdout %q stderr %q", code, out, errs)
	}
}
