package im

// This file: the bounded send queue every goroutine fills without waiting, and
// the writer goroutine that drains it to the socket.

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// sendq is the bounded outgoing queue: lines wait here for the writer.
type sendq struct {
	mu           sync.Mutex
	lines, spare [][]byte
	limit        int
	over, closed bool
	wake         chan struct{}
}

// send queues line for this client; a full queue disconnects it (counted once).
func (c *client) send(line []byte) {
	q := &c.q
	q.mu.Lock()
	if q.over || q.closed {
		q.mu.Unlock()
		return
	}
	if len(q.lines) >= q.limit {
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

// take waits for lines, then hands them all to the writer.
func (q *sendq) take() (lines [][]byte, closed, over bool) {
	for {
		q.mu.Lock()
		if q.over || len(q.lines) > 0 || q.closed {
			lines, closed, over = q.lines, q.closed, q.over
			q.lines, q.spare = q.spare, nil
			q.mu.Unlock()
			return lines, closed, over
		}
		q.mu.Unlock()
		<-q.wake
	}
}

func (q *sendq) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued lines in batches (one writev each) until the queue
// is closed and empty, a write fails, or the queue overflowed.
func (c *client) writeLoop() {
	defer close(c.writerDone)
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
			c.q.spare, over = lines[:0], c.q.over
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
