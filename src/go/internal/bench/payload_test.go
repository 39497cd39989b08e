package bench

import (
	"testing"
	"time"
)

func TestNewBufferLayout(t *testing.T) {
	b := NewBuffer(600, 65)
	if len(b) != 600 || b[0] != 65 || b[1] != 1 || b[255] != 255 || b[256] != 0 || b[599] != byte(599%256) {
		t.Fatalf("bad layout")
	}
}

func TestCheckMessage(t *testing.T) {
	for _, n := range []int{1, 2, 3, 256, 257, 5000} {
		good := NewBuffer(n, 83)
		if !CheckMessage(good, n, 83) {
			t.Errorf("B=%d: good buffer refused", n)
		}
		if CheckMessage(good, n, 67) {
			t.Errorf("B=%d: wrong marker accepted", n)
		}
		if CheckMessage(good[:n-1], n, 83) {
			t.Errorf("B=%d: short buffer accepted", n)
		}
		if CheckMessage(append(append([]byte{}, good...), 0), n, 83) {
			t.Errorf("B=%d: long buffer accepted", n)
		}
		if n >= 2 {
			bad := append([]byte{}, good...)
			bad[n-1]++
			if CheckMessage(bad, n, 83) {
				t.Errorf("B=%d: corrupted last byte accepted", n)
			}
		}
	}
	if CheckMessage(nil, 0, 0) {
		t.Errorf("empty message accepted")
	}
}

func TestCopyReplyMovesBytesIntoOwnBuffers(t *testing.T) {
	o := newOwned(100, 67, 2, true)
	first := o.first()
	in := NewBuffer(100, 83)
	in[50] = 0xEE // a byte only the received message has
	a := o.reply(in)
	b := o.reply(in)
	c := o.reply(in)
	if &a[0] == &in[0] || &first[0] != &o.bufs[0][0] {
		t.Fatal("copy reply is not one of the process's own buffers")
	}
	if &a[0] != &o.bufs[1][0] || &b[0] != &o.bufs[0][0] || &c[0] != &o.bufs[1][0] {
		t.Fatal("own buffers are not used in turn after the first message")
	}
	if in[0] != 83 || !CheckMessage(a, 100, 67) || a[50] != 0xEE {
		t.Fatal("copy reply wrote the received buffer, lost the marker or did not copy the bytes")
	}
	s := newOwned(100, 67, 1, false)
	if x := s.reply(in); &x[0] != &s.bufs[0][0] || x[50] == 0xEE {
		t.Fatal("share reply is not the own, unchanged buffer")
	}
}

func TestCountsExact(t *testing.T) {
	r := Pingping(10, 777, true)
	if r.ReceivedA != 777 || r.ReceivedB != 777 || r.PayloadErrors != 0 {
		t.Fatalf("%+v", r)
	}
	s := Spawn(3000)
	if s.Ready != 3000 {
		t.Fatalf("%+v", s)
	}
	th := Throughput(4, 8, 50*time.Millisecond, 7, false)
	if th.ReportedExchanges != th.CountedExchanges || th.ReportedExchanges == 0 || th.MinPairExchanges < 1 || th.PayloadErrors != 0 {
		t.Fatalf("%+v", th)
	}
}
