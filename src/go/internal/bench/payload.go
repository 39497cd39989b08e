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

// reply is what a receiver sends on: under copy one fresh allocation holding
// the received bytes with its own marker in byte 0 (make+copy; the received
// buffer is never written, since its sender may still hold it); under share
// its own pre-built buffer.
func reply(m []byte, own []byte, copyPayload bool, marker byte) []byte {
	if !copyPayload {
		return own
	}
	c := make([]byte, len(m))
	copy(c, m)
	if len(c) > 0 {
		c[0] = marker
	}
	return c
}
