package app

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"serverbench/internal/cli"
)

// startSockServer runs runSockServer in the background and returns its port; the
// result arrives on the channel once it stops.
func startSockServer(t *testing.T, idleS float64, stdin io.Reader, handle func(net.Conn)) (int, <-chan sockRun) {
	t.Helper()
	cfg := cli.Config{Params: map[string]any{"port": int64(0), "idle_timeout_s": idleS}}
	outR, outW := io.Pipe()
	done := make(chan sockRun, 1)
	go func() {
		run, ok := runSockServer("sock_test", cfg, IO{Stdin: stdin, Stdout: outW, Stderr: io.Discard}, handle)
		if !ok {
			t.Error("could not listen")
		}
		done <- run
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Event, Benchmark, Address string
		Port                      int
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Event != "listening" ||
		ev.Benchmark != "sock_test" || ev.Address != loopbackHost || ev.Port == 0 {
		t.Fatalf("listening line %q (%v)", line, err)
	}
	return ev.Port, done
}

// The stop line closes a connection still open and waits for its handler.
func TestSockServerStopClosesOpenConnections(t *testing.T) {
	inR, inW := io.Pipe()
	handlerDone := make(chan struct{})
	port, done := startSockServer(t, 60, inR, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // returns once the server closes c
		close(handlerDone)
	})
	c, err := net.Dial("tcp4", net.JoinHostPort(loopbackHost, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	time.Sleep(50 * time.Millisecond) // let the accept loop register it
	_, _ = io.WriteString(inW, "stop\n")
	run := <-done
	select {
	case <-handlerDone:
	default:
		t.Error("the server returned before the handler did")
	}
	if run.StopReason != "stop_line" || run.Accepted != 1 || run.Port != port {
		t.Errorf("got %+v", run)
	}
}

// No connection for idle_timeout_s: stop_reason idle_timeout (stdin stays open).
func TestSockServerIdleTimeout(t *testing.T) {
	inR, inW := io.Pipe()
	defer func() { _ = inW.Close() }()
	_, done := startSockServer(t, 0.2, inR, func(net.Conn) {})
	select {
	case run := <-done:
		if run.StopReason != "idle_timeout" || run.Accepted != 0 {
			t.Errorf("got %+v", run)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no idle timeout after 5 s")
	}
}

// A connection the server closes because it was told to stop is not a connection error;
// one the peer resets is.
func TestEchoServerCountsResetsNotItsOwnStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reset bool
		want  int64
	}{{"closed at stop", false, 0}, {"reset by the peer", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			s := &echoServer{}
			port, done := startSockServer(t, 60, inR, s.serve)
			c, err := net.Dial("tcp4", net.JoinHostPort(loopbackHost, strconv.Itoa(port)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, make([]byte, 1)); err != nil { // echoed: the handler runs
				t.Fatal(err)
			}
			if tc.reset {
				_ = c.(*net.TCPConn).SetLinger(0) // close sends RST
				_ = c.Close()
				time.Sleep(100 * time.Millisecond)
			}
			_, _ = io.WriteString(inW, "stop\n")
			<-done
			_ = c.Close()
			if got := s.connErrs.Load(); got != tc.want {
				t.Errorf("connection errors %d, want %d", got, tc.want)
			}
		})
	}
}
