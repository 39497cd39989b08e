package bench

import (
	"testing"
	"time"
)

// The first draws of SplitMix64 seeded with 0 (the reference values of Vigna's
// splitmix64.c), so the schedule is the one Erlang and Scala draw too.
func TestSplitMix64Reference(t *testing.T) {
	r := NewSplitMix64(0)
	want := []uint64{0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F}
	for i, w := range want {
		if got := r.Next(); got != w {
			t.Fatalf("draw %d: %#x, want %#x", i, got, w)
		}
	}
}

func TestCrashScheduleOnePerInterval(t *testing.T) {
	s := CrashSchedule(7, 100, 1, 4)
	if len(s) != 100 {
		t.Fatalf("%d crashes, want 100", len(s))
	}
	for k, c := range s {
		lo, hi := time.Duration(k)*10*time.Millisecond, time.Duration(k+1)*10*time.Millisecond
		if c.At < lo || c.At >= hi || c.Pair < 0 || c.Pair >= 4 {
			t.Fatalf("crash %d at %v pair %d", k, c.At, c.Pair)
		}
	}
	if CrashSchedule(7, 0, 1, 4) != nil {
		t.Fatal("rate 0 must inject nothing")
	}
}

func TestRecoveryRestartsEveryCrashAndBalances(t *testing.T) {
	r := Recovery(RecoveryOpts{Pairs: 2, Bytes: 500, Duration: 200 * time.Millisecond, Rate: 50, Fault: "aggregator", Seed: 3, K: 100})
	if r.Injected != 11 || r.Restarts != r.Injected || int64(len(r.LatenciesS)) != r.Restarts || r.AggCrashes != 1 {
		t.Fatalf("injected %d restarts %d latencies %d", r.Injected, r.Restarts, len(r.LatenciesS))
	}
	if r.Sent != r.Received+r.Lost || r.Counted != r.Exchanges+r.LostExch || r.WorkersAlive != 4 || r.LostExch == 0 {
		t.Fatalf("unbalanced: %+v", r)
	}
}

func TestRecoveryBrokenRestartLeavesAPairDead(t *testing.T) {
	r := Recovery(RecoveryOpts{Pairs: 2, Bytes: 500, Duration: 100 * time.Millisecond, Rate: 30, Fault: "worker", Seed: 1, K: 100, BreakRestart: true})
	if r.Restarts >= r.Injected || r.WorkersAlive >= 4 {
		t.Fatalf("restarts %d of %d, alive %d", r.Restarts, r.Injected, r.WorkersAlive)
	}
}
