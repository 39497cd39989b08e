package im

import "sync"

// mailbox is a process's unbounded mailbox (docs/im.md: one mailbox policy,
// unbounded, as Erlang's): a mutex-guarded slice and a capacity-1 wake-up
// channel. A sender never waits; the only push-back in the server is the
// connection's send queue. Go cannot pre-empt a goroutine, so a kill is made
// here: kill drops what is queued at once, and pop returns false from then on,
// so the owner stops at its next message boundary and handles nothing more.
type mailbox[T any] struct {
	mu     sync.Mutex
	q      []T
	head   int  // q[head:] is queued; popped slots are zeroed for the collector
	killed bool // killed: push refuses, pop returns false at once
	closed bool // closed: push refuses, pop returns what is queued, then false
	held   bool // held by chaos until its kill: pop takes nothing, push still queues
	wake   chan struct{}
}

func newMailbox[T any]() *mailbox[T] {
	return &mailbox[T]{wake: make(chan struct{}, 1)}
}

// push queues v; false when the mailbox was killed or closed first (the
// sender then looks up the successor, or the message is lost).
func (m *mailbox[T]) push(v T) bool {
	m.mu.Lock()
	if m.killed || m.closed {
		m.mu.Unlock()
		return false
	}
	m.q = append(m.q, v)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

// pop waits for the next message; false once the mailbox is killed or closed
// (checked before anything is taken, so a killed owner handles nothing more),
// or when stop is closed.
func (m *mailbox[T]) pop(stop <-chan struct{}) (v T, ok bool) {
	for {
		m.mu.Lock()
		if m.killed {
			m.mu.Unlock()
			return v, false
		}
		if m.head < len(m.q) && !m.held {
			v = m.q[m.head]
			var zero T
			m.q[m.head] = zero
			m.head++
			if m.head == len(m.q) { // empty: reuse the slice from its start
				m.q, m.head = m.q[:0], 0
			} else if m.head >= 1024 && 2*m.head >= len(m.q) { // a long backlog: drop the consumed half
				m.q, m.head = append(m.q[:0], m.q[m.head:]...), 0
			}
			m.mu.Unlock()
			return v, true
		}
		if m.closed && !m.held {
			m.mu.Unlock()
			return v, false
		}
		m.mu.Unlock()
		select {
		case <-m.wake:
		case <-stop:
			return v, false
		}
	}
}

// kill ends the mailbox at once and returns what it held (discarded by the
// caller, which counts them); a second kill returns nothing.
func (m *mailbox[T]) kill() []T {
	m.mu.Lock()
	var dropped []T
	if !m.killed {
		m.killed = true
		dropped = append(dropped, m.q[m.head:]...)
		m.q, m.head = nil, 0
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return dropped
}

// close ends the mailbox once what it holds has been handled (a session or
// channel that ends for good, not a kill).
func (m *mailbox[T]) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// setHeld holds the mailbox (chaos's "queued" pick, from the draw to the
// kill: what is sent waits) or lets its owner go on.
func (m *mailbox[T]) setHeld(held bool) {
	m.mu.Lock()
	m.held = held
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// len is the number of queued messages (chaos's "queued" pick).
func (m *mailbox[T]) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.q) - m.head
}
