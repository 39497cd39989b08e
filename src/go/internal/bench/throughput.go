package bench

import (
	"sync/atomic"
	"time"

	"serverbench/internal/cli"
)

// ThroughputResult is what the throughput run measured and counted.
type ThroughputResult struct {
	Elapsed           time.Duration
	ReportedExchanges int64 // summed by the aggregator from reports
	CountedExchanges  int64 // sum of the servers' own totals
	PayloadErrors     int64
	MinPairExchanges  int64
	Samples           [][2]float64 // [t_s, cumulative exchanges]
	// What the original would have printed (knobs counting and window):
	// WindowBatched is the sum of whole batches the aggregator held when the
	// window ended; WindowReportedS the wall-clock ms from before the start
	// signals to the end of the sleep, /1000 (ConcurrentProcessesThroughput/
	// go/maxSpeakers.go lines 78-96).
	WindowBatched   int64
	WindowReportedS float64
}

// ThroughOpts are the knobs of throughput in Go. The original
// (ConcurrentProcessesThroughput/go/maxSpeakers.go) uses one unbuffered
// channel per pair both ways (line 27), every server copies replies into the
// one message slice main gave them all (lines 35, 57, 65), servers report
// batches of 10,000 (lines 38-41) to a channel of capacity 100 (line 17) and
// never report the rest.
type ThroughOpts struct {
	Capacity     int   // 1: two channels of capacity 1; 0: one unbuffered channel both ways
	Copy         bool  // replies copied into a buffer (else the own buffer sent unchanged)
	SharedBuffer bool  // every server copies into one buffer
	Batched      bool  // only whole batches counted; aggregator channel of 100
	BatchSize    int64 // K; the report period
}

// report is a server's message to the aggregator: n exchanges, or, when final,
// the remainder (count mod K) in n plus the server's own total and the
// payload errors its pair saw.
type report struct {
	n      int64
	final  bool
	total  int64
	errors int64
}

// Throughput runs p server/client pairs exchanging b-byte messages for d, a
// server reporting to one aggregator every k exchanges.
func Throughput(p int, b int, d time.Duration, k int64, copyPayload bool) ThroughputResult {
	return ThroughputWith(p, b, d, ThroughOpts{Capacity: mailbox, Copy: copyPayload, BatchSize: k})
}

// ThroughputWith is Throughput with every knob explicit.
func ThroughputWith(p int, b int, d time.Duration, o ThroughOpts) ThroughputResult {
	k, copyPayload := o.BatchSize, o.Copy
	var stop atomic.Bool
	start := make(chan struct{})
	aggCap := mailbox
	if o.Batched {
		aggCap = 100
	}
	agg := make(chan report, aggCap)
	var batched atomic.Int64 // whole batches the aggregator holds (what the original printed)
	var shared *owned
	if o.SharedBuffer {
		shared = newOwned(b, cli.MarkerThroughputServer, 1, true)
		shared.shared = true
	}
	aggDone := make(chan ThroughputResult, 1)
	var t0 time.Time // written before start is closed; the aggregator reads it after its first report

	// Every process exists before the clock starts.
	for i := 0; i < p; i++ {
		toClient := make(chan []byte, o.Capacity)
		toServer := toClient // unbuffered: one channel both ways, as the original
		if o.Capacity > 0 {
			toServer = make(chan []byte, o.Capacity)
		}
		clientErrs := make(chan int64, 1)
		own := newOwned(b, cli.MarkerThroughputServer, 1, copyPayload)
		if shared != nil {
			own = shared
		}
		go client(toClient, toServer, clientErrs, b, copyPayload)
		go server(toClient, toServer, clientErrs, agg, &stop, start, own, b, k, copyPayload)
	}
	go aggregator(agg, p, &t0, aggDone, &batched)

	t0ms := time.Now().UnixMilli()
	t0 = time.Now()
	close(start) // the start signal to every server
	time.Sleep(d)
	// The original printed here: the batches its aggregator had summed.
	windowBatched, t1ms := batched.Load(), time.Now().UnixMilli()
	stop.Store(true)
	res := <-aggDone
	res.WindowBatched, res.WindowReportedS = windowBatched, ReportedSeconds(t0ms, t1ms)
	return res
}

func server(toClient chan<- []byte, toServer <-chan []byte, clientErrs <-chan int64, agg chan<- report, stop *atomic.Bool, start <-chan struct{}, own *owned, b int, k int64, copyPayload bool) {
	<-start
	msg := own.first()
	var count, errors int64
	untilReport := k // a countdown, not count%k: no division per exchange
	for {
		toClient <- msg
		m := <-toServer
		if !CheckMessage(m, b, cli.MarkerThroughputClient) {
			errors++
		}
		count++
		if untilReport--; untilReport == 0 {
			agg <- report{n: k}
			untilReport = k
		}
		if stop.Load() { // read once per exchange
			break
		}
		msg = own.reply(m)
	}
	close(toClient)
	errors += <-clientErrs
	agg <- report{n: count % k, final: true, total: count, errors: errors}
}

func client(toClient <-chan []byte, toServer chan<- []byte, errs chan<- int64, b int, copyPayload bool) {
	own := newOwned(b, cli.MarkerThroughputClient, 1, copyPayload)
	var errors int64
	for m := range toClient {
		if !CheckMessage(m, b, cli.MarkerThroughputServer) {
			errors++
		}
		toServer <- own.reply(m)
	}
	errs <- errors
}

func aggregator(agg <-chan report, p int, t0 *time.Time, done chan<- ThroughputResult, batched *atomic.Int64) {
	var res ThroughputResult
	minInterval := time.Duration(cli.ThroughputSampleMinIntervalS * float64(time.Second))
	var lastSample time.Duration // the clock's start counts as the previous sample
	var cumulative int64
	finals := 0
	first := true
	for finals < p {
		r := <-agg
		cumulative += r.n
		if !r.final {
			batched.Add(r.n)
		}
		if r.final {
			finals++
			res.CountedExchanges += r.total
			res.PayloadErrors += r.errors
			if first || r.total < res.MinPairExchanges {
				res.MinPairExchanges = r.total
				first = false
			}
		}
		// A report only arrives after start was closed, so *t0 is visible.
		now := time.Since(*t0)
		if now-lastSample >= minInterval {
			res.Samples = append(res.Samples, [2]float64{now.Seconds(), float64(cumulative)})
			lastSample = now
		}
	}
	res.Elapsed = time.Since(*t0) // clock stops: all P finals are here
	res.ReportedExchanges = cumulative
	res.Samples = append(res.Samples, [2]float64{res.Elapsed.Seconds(), float64(cumulative)})
	done <- res
}
