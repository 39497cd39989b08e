package record

import (
	"os"
	"runtime"
	"testing"
)

func TestGCFor(t *testing.T) {
	for _, c := range []struct{ version, exp, want string }{
		{"go1.26.8", "", "greentea"},
		{"go1.26.8-X:nogreenteagc", "nogreenteagc", "nogreentea"},
		{"go1.26.8", "jsonv2,nogreenteagc", "nogreentea"},
		{"go1.25.3", "", "nogreentea"},
		{"go1.25.3", "greenteagc", "greentea"},
		{"go1.24.1", "greenteagc", "nogreentea"},
		{"go1.27rc1", "", "greentea"},
		{"devel go1.27-abc", "", "nogreentea"},
	} {
		if got := gcFor(c.version, c.exp); got != c.want {
			t.Errorf("gcFor(%q, %q) = %q, want %q", c.version, c.exp, got, c.want)
		}
	}
}

// TestGCOfThisBinary: the test binary is built like the program, so its GC follows
// GOEXPERIMENT as go test saw it (the second build in scripts/build.sh is checked by
// app_test's exec of bin/serverbench-nogreenteagc).
func TestGCOfThisBinary(t *testing.T) {
	want := gcFor(runtime.Version(), os.Getenv("GOEXPERIMENT"))
	if got := GC(); got != want {
		t.Fatalf("GC() = %q, want %q (GOEXPERIMENT=%q)", got, want, os.Getenv("GOEXPERIMENT"))
	}
	if r := CurrentRuntime(); r.GC != GC() {
		t.Fatalf("runtime.gc %q, GC() %q", r.GC, GC())
	}
}
