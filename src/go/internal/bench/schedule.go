package bench

import (
	"math"
	"time"
)

// SplitMix64 is the seeded stream every language draws the crash schedule from
// (docs/spec.md "recovery"): the same seed gives the same crash times and victims
// in Go, Erlang and Scala.
type SplitMix64 struct{ state uint64 }

func NewSplitMix64(seed uint64) *SplitMix64 { return &SplitMix64{state: seed} }

func (r *SplitMix64) Next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Crash is one scheduled worker fault: at At after the clock starts, in pair Pair.
type Crash struct {
	At   time.Duration
	Pair int
}

// CrashSchedule: crash k at t_k = (k + u_k) / rate s while t_k < duration, with
// u_k = (next >> 11) / 2^53 and the pair next mod pairs (two draws per crash, in
// that order). One crash per 1/rate interval: a fixed rate, placed at random.
func CrashSchedule(seed uint64, rate, durationS float64, pairs int) []Crash {
	if rate <= 0 {
		return nil
	}
	r := NewSplitMix64(seed)
	var out []Crash
	for k := 0; ; k++ {
		u := float64(r.Next()>>11) / (1 << 53)
		pair := int(r.Next() % uint64(pairs))
		t := (float64(k) + u) / rate
		if t >= durationS || math.IsInf(t, 0) {
			return out
		}
		out = append(out, Crash{At: time.Duration(t * 1e9), Pair: pair})
	}
}
