package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func spec(t *testing.T) []byte {
	b, err := os.ReadFile("../../../../spec/cli.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKnobsResolveByVariant(t *testing.T) {
	s := spec(t)
	k, err := ResolveKnobs(s, "throughput", "go", "paper", map[string]any{"mailbox": "variant"})
	if err != nil || k["mailbox"] != "0" || k["counting"] != "batched" || k["server_buffer"] != "shared" || k["send"] != "copy" {
		t.Fatalf("paper: %v %v", k, err)
	}
	if _, has := k["match"]; has {
		t.Fatal("an erlang-only knob resolved for go")
	}
	k, err = ResolveKnobs(s, "throughput", "go", "mixed", map[string]any{"counting": "batched"})
	if err != nil || k["counting"] != "batched" || k["mailbox"] != "1" || k["window"] != "drain" {
		t.Fatalf("mixed single knob: %v %v", k, err)
	}
	k, _ = ResolveKnobs(s, "pingping", "go", "fair", map[string]any{})
	if k["mailbox"] != "1" || k["send"] != "payload" {
		t.Fatalf("fair: %v", k)
	}
}

func TestKnobsRefused(t *testing.T) {
	s := spec(t)
	for _, c := range []struct {
		bench, variant string
		params         map[string]any
		want           string
	}{
		{"pingping", "fair", map[string]any{"mailbox": "100"}, "contradicts --variant fair"},
		{"pingping", "paper", map[string]any{"mailbox": "1"}, "contradicts --variant paper"},
		{"pingping", "mixed", map[string]any{"match": "bound"}, "not a knob of go"},
		{"spawn", "paper", map[string]any{"dispatcher": "default"}, "not a knob of go"},
	} {
		_, err := ResolveKnobs(s, c.bench, "go", c.variant, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v, want one line with %q", c, err, c.want)
		}
	}
}

func TestPingpingBufferedShareCountsExact(t *testing.T) {
	r := PingpingWith(64, 1000, PingOpts{Capacity: 100, Copy: false})
	if r.ReceivedA != 1000 || r.ReceivedB != 1000 || r.PayloadErrors != 0 || r.ReportedS < 0 {
		t.Fatalf("%+v", r)
	}
}

func TestThroughputPaperDropsPartialBatches(t *testing.T) {
	r := ThroughputWith(3, 100, 60*time.Millisecond, ThroughOpts{Capacity: 0, Copy: true, SharedBuffer: true, Batched: true, BatchSize: 1000})
	if r.PayloadErrors != 0 || r.CountedExchanges != r.ReportedExchanges || r.MinPairExchanges < 1 {
		t.Fatalf("%+v", r)
	}
	if r.WindowBatched%1000 != 0 || r.WindowBatched > r.CountedExchanges {
		t.Fatalf("window count %d is not whole batches below the true %d", r.WindowBatched, r.CountedExchanges)
	}
	if r.CountedExchanges%1000 == 0 {
		t.Logf("true count happens to be a multiple of the batch")
	}
}

func TestSharedServerBufferKeepsMarker(t *testing.T) {
	o := newOwned(10, 83, 1, true)
	o.shared = true
	in := NewBuffer(10, 67)
	out := o.reply(in)
	if &out[0] != &o.bufs[0][0] || out[0] != 83 || !CheckMessage(out, 10, 83) {
		t.Fatal("shared reply is not the one buffer with the server's marker")
	}
}
