package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"serverbench/internal/record"
)

// TestGreenTeaBuilds: the GC is chosen when the program is built (scripts/build.sh go
// builds bin/serverbench and bin/serverbench-nogreenteagc), and each binary's record
// says which collector it runs (runtime.gc), read from its own build info.
func TestGreenTeaBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	if !record.GreenTeaKnown() {
		t.Skip(runtime.Version() + " has no Green Tea GC")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, c := range []struct{ experiment, want string }{{"", "greentea"}, {"nogreenteagc", "nogreentea"}} {
		exe := filepath.Join(t.TempDir(), "serverbench")
		build := exec.Command(goTool, "build", "-o", exe, "serverbench/cmd/serverbench")
		build.Env = append(os.Environ(), "GOEXPERIMENT="+c.experiment)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("GOEXPERIMENT=%s go build: %v\n%s", c.experiment, err, out)
		}
		out, err := exec.Command(exe, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Runtime struct {
				GC      string `json:"gc"`
				Version string `json:"version"`
			} `json:"runtime"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if v.Runtime.GC != c.want {
			t.Errorf("GOEXPERIMENT=%q: runtime.gc %q (version %s), want %q", c.experiment, v.Runtime.GC, v.Runtime.Version, c.want)
		}
	}
}
