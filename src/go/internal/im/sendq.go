package im

// This file: the bounded send queue every goroutine fills without waiting, and
// the writer goroutine that drains it to the socket and, when the connection
// ends, runs its clean-up (client.go): the link that cleans up after a reader
// that returned, crashed or was killed.

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// sendq is the bounded outgoing queue: lines wait here for the writer. A line
// counts against limit from the moment it is queued until the write that
// contains it has returned: the writer's batch (inflight) counts.
type sendq struct {
	mu                   sync.Mutex
	lines, spare         [][]byte
	inflight             int // lines of the batch being written
	limit                int
	over, closed, killed bool
	held                 bool   // held by chaos until its kill: the writer takes nothing
	reason               string // the QUIT reason the reader ended with
	wake                 chan struct{}
}

// send queues line for this client; a full queue disconnects it (counted once).
func (c *client) send(line []byte) {
	q := &c.q
	q.mu.Lock()
	if q.over || q.closed {
		q.mu.Unlock()
		return
	}
	if len(q.lines)+q.inflight >= q.limit {
		q.over, q.lines = true, nil
		q.mu.Unlock()
		c.srv.m.sendqDisconnects.Add(1)
		_ = c.conn.SetWriteDeadline(time.Now()) // a write blocked on a client that does not read returns
	} else {
		q.lines = append(q.lines, line)
		q.mu.Unlock()
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for lines, then hands them all to the writer (they stay counted,
// as inflight, until the writer has written them).
func (q *sendq) take() (lines [][]byte, closed, over bool) {
	for {
		q.mu.Lock()
		if q.killed {
			q.mu.Unlock()
			return nil, true, false
		}
		if q.over || (len(q.lines) > 0 || q.closed) && !q.held {
			lines, closed, over = q.lines, q.closed, q.over
			q.lines, q.spare = q.spare, nil
			q.inflight = len(lines)
			q.mu.Unlock()
			return lines, closed, over
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// close: the reader has ended (reason: what to relay as its QUIT); the writer
// writes what is queued, then cleans up.
func (q *sendq) close(reason string) {
	q.mu.Lock()
	if !q.closed {
		q.closed, q.reason = true, reason
	}
	q.mu.Unlock()
	q.poke()
}

// kill discards the queue at once (chaos killed the connection) and returns
// how many lines it held; the writer writes nothing more and cleans up.
func (q *sendq) kill() int {
	q.mu.Lock()
	n := len(q.lines)
	if q.killed || q.over {
		n = 0
	}
	q.lines, q.killed, q.closed = nil, true, true
	if q.reason == "" {
		q.reason = "Killed"
	}
	q.mu.Unlock()
	q.poke()
	return n
}

// setHeld holds the queue (chaos's "queued" pick, from the draw to the kill:
// lines wait, the writer takes none) or lets the writer go on.
func (q *sendq) setHeld(held bool) {
	q.mu.Lock()
	q.held = held
	q.mu.Unlock()
	q.poke()
}

func (q *sendq) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// len is the number of lines counted against the limit (chaos's "queued" pick).
func (q *sendq) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.lines) + q.inflight
}

func (q *sendq) endReason() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.over {
		return "SendQ exceeded"
	}
	if q.reason == "" {
		return "Connection closed"
	}
	return q.reason
}

// writeLoop writes queued lines in batches (one writev each) until the queue
// is closed and empty, a write fails, or the queue overflowed.
func (c *client) writeLoop() {
	defer close(c.writerDone)
	defer func() { c.cleanup(c.q.endReason()) }()
	midLine := false     // a write cut short left part of a line on the wire
	var bufs net.Buffers // WriteTo consumes it, so lines keep their lengths
	for {
		lines, closed, over := c.q.take()
		if !over && len(lines) > 0 {
			bufs = append(bufs[:0], lines...)
			n, err := bufs.WriteTo(c.conn)
			midLine = err != nil && cutsLine(lines, n)
			for i := range lines {
				lines[i] = nil
			}
			bufs = bufs[:0]
			c.q.mu.Lock()
			c.q.spare, over, c.q.inflight = lines[:0], c.q.over, 0
			c.q.mu.Unlock()
			if err != nil && !over {
				if isConnFault(err) {
					c.srv.m.connErrors.Add(1)
				}
				_ = c.conn.Close()
				return
			}
		}
		if over {
			_ = c.conn.SetWriteDeadline(time.Now().Add(closeGrace))
			msg := "ERROR :SendQ exceeded\r\n"
			if midLine {
				msg = "\r\n" + msg
			}
			_, _ = io.WriteString(c.conn, msg)
			_ = c.conn.Close()
			return
		}
		if closed {
			return
		}
	}
}

// cutsLine: whether n bytes of lines end inside a line.
func cutsLine(lines [][]byte, n int64) bool {
	for _, l := range lines {
		if n < int64(len(l)) {
			return n > 0
		}
		n -= int64(len(l))
	}
	return false
}

// isConnFault: a failed read or write that is the connection's fault; a clean
// close by the peer is not, nor the server's own close.
func isConnFault(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF)
}

func (q *sendq) isOver() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.over
}
