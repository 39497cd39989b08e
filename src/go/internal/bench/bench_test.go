package bench

import (
	"testing"
	"time"
)

// Go benchmarks for profiling (go test -bench . -cpuprofile); not run by
// go test ./... without -bench.

func BenchmarkPingpingCopy5000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Pingping(5000, 100000, true)
	}
}

func BenchmarkThroughput1Pair500(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Throughput(1, 500, time.Second, 10000, true)
	}
}
