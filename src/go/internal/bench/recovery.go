package bench

// recovery (docs/spec.md "recovery"): throughput's pairs under supervision, with
// crashes injected from a seeded schedule. Go has no supervisor in its standard
// library, so each server runs under a supervising goroutine that recovers the
// injected panic and starts a new incarnation on the pair's same channels. The
// aggregator is supervised the same way. Counts that must survive a crash live in
// per-pair instrumentation (pairStats) written by the crashing worker's crash hook
// just before it panics, never on the exchange path.

import (
	"sync"
	"sync/atomic"
	"time"

	"serverbench/internal/cli"
)

// RecoveryOpts are the flags of one recovery run.
type RecoveryOpts struct {
	Pairs, Bytes int
	Duration     time.Duration
	Rate         float64 // crashes per second; 0: none
	Fault        string  // "worker" or "aggregator"
	Seed         uint64
	K            int64
	BreakRestart bool // test hook: the first crashed worker is not restarted
}

// RecoveryResult is what a run measured and counted.
type RecoveryResult struct {
	Elapsed                        time.Duration
	Exchanges, Counted, LostExch   int64
	Sent, Received, Lost           int64
	Injected, Restarts, AggCrashes int64
	WorkersAlive, PayloadErrors    int64
	MinPairExchanges               int64
	LatenciesS, CrashTimesS        []float64
	Samples                        [][2]float64
}

// injectedCrash is the panic value of an injected fault; any other panic is a bug
// and is re-raised by the supervisor.
type injectedCrash struct{}

type pairStats struct {
	pending             atomic.Int32 // crashes injected, not yet taken
	sent, received      atomic.Int64 // flushed at crash and at the end
	lost, counted, lexc atomic.Int64
	// awaiting: crash times (ns since t0) not yet followed by an exchange; only the
	// pair's supervising goroutine (its incarnations run there in turn) touches it.
	awaiting []int64
	finished atomic.Bool
	_        [64]byte // keeps pairs' hot fields on their own cache lines
}

type recReport struct {
	n     int64
	final bool
	crash bool // the injected aggregator fault
}

type recShared struct {
	o         RecoveryOpts
	t0        time.Time
	stop      atomic.Bool
	pairs     []*pairStats
	agg       chan recReport
	mu        sync.Mutex
	latencies []float64
	restarts  atomic.Int64
	errors    atomic.Int64
}

func (s *recShared) since() int64 { return int64(time.Since(s.t0)) }

// addLatencies records, for every crash in awaiting, the time from it to now (the
// first exchange after it): a crash of a restarted worker before its first exchange
// still gets its sample, at the first exchange that follows.
func (s *recShared) addLatencies(awaiting []int64) {
	now := s.since()
	s.mu.Lock()
	for _, at := range awaiting {
		s.latencies = append(s.latencies, float64(now-at)/1e9)
	}
	s.mu.Unlock()
}

// Recovery runs one recovery measurement.
func Recovery(o RecoveryOpts) RecoveryResult {
	s := &recShared{o: o, agg: make(chan recReport, mailbox)}
	sched := CrashSchedule(o.Seed, o.Rate, o.Duration.Seconds(), o.Pairs)
	start := make(chan struct{})
	var servers sync.WaitGroup
	clientsDone := make([]chan int64, o.Pairs)
	for i := 0; i < o.Pairs; i++ {
		ps := &pairStats{}
		s.pairs = append(s.pairs, ps)
		toClient, toServer := make(chan []byte, mailbox), make(chan []byte, mailbox)
		clientsDone[i] = make(chan int64, 1)
		go recClient(toClient, toServer, clientsDone[i], o.Bytes, ps)
		servers.Add(1)
		go superviseServer(s, ps, toClient, toServer, start, &servers)
	}
	aggOut := make(chan aggTotals, 1)
	var aggState aggInstr
	go superviseAggregator(s, &aggState, aggOut)

	s.t0 = time.Now()
	close(start)
	var injected, aggCrashes int64
	var crashTimes []float64
	inject := func(at time.Duration, fn func()) {
		if w := at - time.Since(s.t0); w > 0 {
			time.Sleep(w)
		}
		fn()
		crashTimes = append(crashTimes, time.Since(s.t0).Seconds())
		injected++
	}
	aggAt := time.Duration(-1)
	if o.Fault == "aggregator" {
		aggAt = o.Duration / 2
	}
	for _, c := range sched {
		if aggAt >= 0 && c.At >= aggAt {
			inject(aggAt, func() { s.agg <- recReport{crash: true} })
			aggAt, aggCrashes = -1, 1
		}
		inject(c.At, func() { s.pairs[c.Pair].pending.Add(1) })
	}
	if aggAt >= 0 {
		inject(aggAt, func() { s.agg <- recReport{crash: true} })
		aggCrashes = 1
	}
	if w := o.Duration - time.Since(s.t0); w > 0 {
		time.Sleep(w)
	}
	s.stop.Store(true)
	servers.Wait()                         // every server ended, or its supervisor gave up (BreakRestart)
	s.agg <- recReport{final: true, n: -1} // after every server's last report (happens-before)
	tot := <-aggOut

	r := RecoveryResult{Elapsed: time.Since(s.t0), Exchanges: tot.held, Injected: injected,
		AggCrashes: aggCrashes, CrashTimesS: crashTimes, Samples: aggState.samples}
	r.LostExch = aggState.lost.Load()
	r.MinPairExchanges = -1
	for i, ps := range s.pairs {
		r.Sent += ps.sent.Load()
		r.Received += ps.received.Load()
		r.Lost += ps.lost.Load()
		r.Counted += ps.counted.Load()
		r.LostExch += ps.lexc.Load()
		if ps.finished.Load() {
			r.WorkersAlive += 1 + <-clientsDone[i] // the client ends when its server closes
		}
		if c := ps.counted.Load(); r.MinPairExchanges < 0 || c < r.MinPairExchanges {
			r.MinPairExchanges = c
		}
	}
	r.Restarts = s.restarts.Load()
	r.PayloadErrors = s.errors.Load()
	r.LatenciesS = s.latencies
	return r
}

// superviseServer restarts the pair's server after every injected crash: the new
// incarnation gets the same channels (re-wired) and builds a fresh buffer.
func superviseServer(s *recShared, ps *pairStats, toClient chan<- []byte, toServer <-chan []byte, start <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	<-start
	for serverIncarnation(s, ps, toClient, toServer) {
		if s.o.BreakRestart {
			return // deliberately broken supervisor: the pair stays dead
		}
		s.restarts.Add(1)
	}
	ps.finished.Store(true)
	close(toClient)
}

// serverIncarnation runs one server until the stop (false) or an injected crash (true).
func serverIncarnation(s *recShared, ps *pairStats, toClient chan<- []byte, toServer <-chan []byte) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(injectedCrash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	own := newOwned(s.o.Bytes, cli.MarkerThroughputServer, 1, true)
	msg := own.first()
	var sent, received, count, unreported int64
	k := s.o.K
	for {
		toClient <- msg
		sent++
		m := <-toServer
		if ps.pending.Load() > 0 { // the fault: raised in the server's own code
			ps.pending.Add(-1)
			ps.sent.Add(sent)
			ps.received.Add(received)
			ps.lost.Add(1) // the reply in hand dies with this incarnation
			ps.counted.Add(count)
			ps.lexc.Add(unreported)
			ps.awaiting = append(ps.awaiting, s.since())
			panic(injectedCrash{})
		}
		received++
		if !CheckMessage(m, s.o.Bytes, cli.MarkerThroughputClient) {
			s.errors.Add(1)
		}
		count++
		if len(ps.awaiting) > 0 { // first exchange of a restarted server
			s.addLatencies(ps.awaiting)
			ps.awaiting = ps.awaiting[:0]
		}
		if unreported++; unreported == k {
			s.agg <- recReport{n: k}
			unreported = 0
		}
		// A crash injected before the stop is still taken: pending was stored before stop.
		if s.stop.Load() && ps.pending.Load() == 0 {
			break
		}
		msg = own.reply(m)
	}
	ps.sent.Add(sent)
	ps.received.Add(received)
	ps.counted.Add(count)
	s.agg <- recReport{n: unreported}
	return false
}

func recClient(toClient <-chan []byte, toServer chan<- []byte, done chan<- int64, b int, ps *pairStats) {
	own := newOwned(b, cli.MarkerThroughputClient, 1, true)
	var sent, received int64
	for m := range toClient {
		received++
		_ = CheckMessage(m, b, cli.MarkerThroughputServer) // counted by the server's check of the reply
		toServer <- own.reply(m)
		sent++
	}
	ps.sent.Add(sent)
	ps.received.Add(received)
	done <- 1
}

type aggTotals struct{ held int64 }

// aggInstr is the aggregator's instrumentation: it survives the aggregator's crash.
type aggInstr struct {
	lost     atomic.Int64 // totals held by crashed incarnations
	samples  [][2]float64
	awaiting []int64
}

func superviseAggregator(s *recShared, in *aggInstr, out chan<- aggTotals) {
	for {
		held, crashed := aggIncarnation(s, in)
		if !crashed {
			out <- aggTotals{held: held}
			return
		}
		s.restarts.Add(1)
	}
}

func aggIncarnation(s *recShared, in *aggInstr) (held int64, crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(injectedCrash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	minInterval := time.Duration(cli.ThroughputSampleMinIntervalS * float64(time.Second))
	var last time.Duration
	for {
		r := <-s.agg
		if r.crash {
			in.lost.Add(held) // the state this incarnation held dies with it
			in.awaiting = append(in.awaiting, s.since())
			panic(injectedCrash{})
		}
		if r.final && r.n < 0 {
			in.samples = append(in.samples, [2]float64{time.Since(s.t0).Seconds(), float64(held)})
			return held, false
		}
		if len(in.awaiting) > 0 {
			s.addLatencies(in.awaiting)
			in.awaiting = in.awaiting[:0]
		}
		held += r.n
		if now := time.Since(s.t0); now-last >= minInterval {
			in.samples = append(in.samples, [2]float64{now.Seconds(), float64(held)})
			last = now
		}
	}
}
