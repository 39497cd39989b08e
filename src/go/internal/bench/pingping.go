package bench

import (
	"time"

	"serverbench/internal/cli"
)

// PingpingResult is what the pingping run measured and counted.
type PingpingResult struct {
	Elapsed       time.Duration
	ReceivedA     int64
	ReceivedB     int64
	PayloadErrors int64
	// ReportedS is what the original programs printed: wall-clock
	// milliseconds around the same region, divided by 1000.
	ReportedS float64
}

// PingOpts are the knobs of pingping in Go: channel capacity (fair 1, the
// original 100: ProcessCommunicationLatency/go/pingping.go lines 15-16) and
// whether a reply is copied into the side's own buffer or the same buffer is
// sent by reference (the original sends one slice shared by both sides and
// copies it onto itself, line 21: nothing moves).
type PingOpts struct {
	Capacity int
	Copy     bool
}

type pingResult struct {
	received, errors int64
}

// Pingping runs two processes that each send r messages of b bytes to the
// other, starting at the same time (IMB PingPing).
func Pingping(b int, r int64, copyPayload bool) PingpingResult {
	return PingpingWith(b, r, PingOpts{Capacity: mailbox, Copy: copyPayload})
}

// PingpingWith is Pingping with every knob explicit.
func PingpingWith(b int, r int64, o PingOpts) PingpingResult {
	copyPayload := o.Copy
	inA := make(chan []byte, o.Capacity)
	inB := make(chan []byte, o.Capacity)
	start := make(chan struct{})
	doneA := make(chan pingResult, 1)
	doneB := make(chan pingResult, 1)
	// Each side's own buffers are built here, before the clock (two each: see owned).
	ownA := newOwned(b, cli.MarkerPingpingA, 2, copyPayload)
	ownB := newOwned(b, cli.MarkerPingpingB, 2, copyPayload)
	go pinger(cli.MarkerPingpingB, inA, inB, ownA, b, r, start, doneA)
	go pinger(cli.MarkerPingpingA, inB, inA, ownB, b, r, start, doneB)

	t0ms := time.Now().UnixMilli()
	t0 := time.Now()
	close(start) // start signal to both at once
	ra := <-doneA
	rb := <-doneB
	elapsed := time.Since(t0)
	t1ms := time.Now().UnixMilli()
	return PingpingResult{Elapsed: elapsed, ReceivedA: ra.received, ReceivedB: rb.received, PayloadErrors: ra.errors + rb.errors,
		ReportedS: ReportedSeconds(t0ms, t1ms)}
}

// pinger cannot deadlock with capacity-1 (or larger) channels: each send follows one
// receive, so both mailboxes are never full while both sides are sending.
func pinger(peer byte, in <-chan []byte, out chan<- []byte, own *owned, b int, r int64, start <-chan struct{}, done chan<- pingResult) {
	<-start
	out <- own.first()
	sent := int64(1)
	var received, errors int64
	for received < r {
		m := <-in
		if !CheckMessage(m, b, peer) {
			errors++
		}
		received++
		if sent < r {
			out <- own.reply(m)
			sent++
		}
	}
	done <- pingResult{received: received, errors: errors}
}
