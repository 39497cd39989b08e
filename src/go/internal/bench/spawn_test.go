package bench

import "testing"

// Spawn hands its state to the sleepers through a package variable (no per-goroutine
// closure); a second Spawn in the same process must count only its own sleepers.
func TestSpawnCountsOnlyItsOwnSleepers(t *testing.T) {
	for _, n := range []int64{2000, 500} {
		r := Spawn(n)
		if r.Ready != n || r.AllReady < r.SpawnCall {
			t.Fatalf("Spawn(%d): %+v", n, r)
		}
	}
}
