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
	var stop atomic.Bool
	start := make(chan struct{})
	agg := make(chan report, mailbox)
	aggDone := make(chan ThroughputResult, 1)
	var t0 time.Time // written before start is closed; the aggregator reads it after its first report

	// Every process exists before the clock starts.
	for i := 0; i < p; i++ {
		toClient := make(chan []byte, mailbox)
		toServer := make(chan []byte, mailbox)
		clientErrs := make(chan int64, 1)
		go client(toClient, toServer, clientErrs, b, copyPayload)
		go server(toClient, toServer, clientErrs, agg, &stop, start, b, k, copyPayload)
	}
	go aggregator(agg, p, &t0, aggDone)

	t0 = time.Now()
	close(start) // the start signal to every server
	time.Sleep(d)
	stop.Store(true)
	return <-aggDone
}

func server(toClient chan<- []byte, toServer <-chan []byte, clientErrs <-chan int64, agg chan<- report, stop *atomic.Bool, start <-chan struct{}, b int, k int64, copyPayload bool) {
	own := newOwned(b, cli.MarkerThroughputServer, 1, copyPayload)
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

func aggregator(agg <-chan report, p int, t0 *time.Time, done chan<- ThroughputResult) {
	var res ThroughputResult
	minInterval := time.Duration(cli.ThroughputSampleMinIntervalS * float64(time.Second))
	var lastSample time.Duration // the clock's start counts as the previous sample
	var cumulative int64
	finals := 0
	first := true
	for finals < p {
		r := <-agg
		cumulative += r.n
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
