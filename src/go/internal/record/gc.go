package record

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// GC names the garbage collector this binary runs, for runtime.gc: "greentea" or
// "nogreentea". Green Tea is chosen when the program is built (GOEXPERIMENT), so the
// answer comes from the build itself: the GOEXPERIMENT setting in the binary's build
// info and the toolchain's version (Green Tea is the default from Go 1.26, an opt-in
// experiment in 1.25, absent before).
func GC() string {
	experiments := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOEXPERIMENT" {
				experiments = s.Value
			}
		}
	}
	return gcFor(runtime.Version(), experiments)
}

func gcFor(version, experiments string) string {
	major, minor := goVersion(version)
	newer := func(m int) bool { return major > 1 || (major == 1 && minor >= m) }
	on := newer(26)
	for _, e := range strings.Split(experiments, ",") {
		switch strings.TrimSpace(e) {
		case "greenteagc":
			on = newer(25)
		case "nogreenteagc":
			on = false
		}
	}
	if on {
		return "greentea"
	}
	return "nogreentea"
}

// goVersion parses "go1.26.8", "go1.26.8-X:nogreenteagc" or "go1.27rc1"; (0, 0) when
// it cannot (a devel toolchain), which reads as older than any release.
func goVersion(v string) (int, int) {
	v = strings.TrimPrefix(v, "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0
	}
	major, err1 := strconv.Atoi(parts[0])
	minorText := parts[1]
	if i := strings.IndexFunc(minorText, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorText = minorText[:i]
	}
	minor, err2 := strconv.Atoi(minorText)
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	return major, minor
}

// GreenTeaKnown: whether this toolchain has the Green Tea GC to switch (Go 1.25 or newer).
func GreenTeaKnown() bool {
	major, minor := goVersion(runtime.Version())
	return major > 1 || (major == 1 && minor >= 25)
}
