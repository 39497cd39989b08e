// Package bench implements the three benchmarks with the "fair" semantics of
// docs/spec.md: goroutines are processes, channels of capacity 1 are mailboxes.
package bench

// mailbox is the capacity of every channel that stands for a mailbox: an
// asynchronous send, as to an actor, but no unbounded queue.
const mailbox = 1

// NewBuffer builds a message of b bytes: byte 0 the sender's marker, byte i
// holds i mod 256. Called only outside the timed region.
func NewBuffer(b int, marker byte) []byte {
	buf := make([]byte, b)
	for i := 1; i < b; i++ {
		buf[i] = byte(i)
	}
	if b > 0 {
		buf[0] = marker
	}
	return buf
}

// CheckMessage is the receive-side check of every message: length b, byte 0
// is the peer's marker and, when b >= 2, the last byte is (b-1) mod 256.
func CheckMessage(m []byte, b int, peer byte) bool {
	if len(m) != b || b == 0 || m[0] != peer {
		return false
	}
	return b < 2 || m[b-1] == byte(b-1)
}

// owned is a process's own set of buffers. Under copy the receiver copies the
// bytes it received into the next one of them (B bytes moved, no allocation: "the
// receiver copies into its own buffer"), writes its marker into byte 0 and sends
// that buffer on; under share it always sends buffer 0 unchanged.
//
// A buffer is rewritten only when the peer has provably finished copying out of
// it (the channel receive that precedes the write orders it after the peer's
// copy). In throughput one message is in flight per pair, so one buffer is
// enough. In pingping both sides send at once, so message k+1 reuses the buffer
// of message k-1, which the peer copied before it sent the message k that was
// just received: two buffers, used in turn.
type owned struct {
	bufs   [][]byte
	next   int
	copyIn bool
	marker byte
	// shared: one buffer written by many servers at once (the original Go
	// throughput, see ThroughOpts). Byte 0 is never rewritten, so a reader
	// sees the marker even while another server copies.
	shared bool
}

func newOwned(b int, marker byte, n int, copyPayload bool) *owned {
	o := &owned{copyIn: copyPayload, marker: marker}
	for i := 0; i < n; i++ {
		o.bufs = append(o.bufs, NewBuffer(b, marker))
	}
	return o
}

// first is the first message a process sends: its buffer 0 as built.
func (o *owned) first() []byte {
	if o.shared {
		return o.bufs[0]
	}
	o.next = 1 % len(o.bufs)
	return o.bufs[0]
}

// reply is what a process sends after receiving m.
func (o *owned) reply(m []byte) []byte {
	if !o.copyIn {
		return o.bufs[0]
	}
	if o.shared {
		copy(o.bufs[0][1:], m[1:])
		return o.bufs[0]
	}
	c := o.bufs[o.next]
	o.next = (o.next + 1) % len(o.bufs)
	copy(c, m) // a short m was already counted as a payload error by the check
	if len(c) > 0 {
		c[0] = o.marker
	}
	return c
}
