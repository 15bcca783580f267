package daemon_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon"
)

// serving starts a daemon with cfg on 127.0.0.1 and returns its address;
// the test's end stops it.
func serving(t *testing.T, cfg daemon.Config) string {
	t.Helper()
	cfg.StateDir = privateDir(t)
	d, err := daemon.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		<-served
		d.Close()
	})
	return ln.Addr().String()
}

// dialFrom opens a connection to addr from the loopback address from, so
// a test can play several clients on one machine.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stateStatus asks for the Hub state from 127.0.0.1 on a fresh connection
// and returns the status, failing the test after deadline.
func stateStatus(t *testing.T, addr string, deadline time.Duration) int {
	t.Helper()
	c := dialFrom(t, "127.0.0.1", addr)
	c.SetDeadline(time.Now().Add(deadline))
	fmt.Fprintf(c, "GET /api/hub/state HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", deadline, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// closed reports whether the server closed c (within a second).
func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Second))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF || (err != nil && !isTimeout(err))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A slowloris of 500 connections, half sending headers a byte at a time
// and half a body a byte at a time, does not stop another client's
// answers: one address gets DefaultMaxConnsPerClient connections, the
// rest are closed at once, and the others are served as usual.
func TestSlowlorisDoesNotStopOthers(t *testing.T) {
	is := is.New(t)
	addr := serving(t, daemon.Config{})
	var held []net.Conn
	for i := range 500 {
		c := dialFrom(t, "127.0.0.2", addr)
		if i%2 == 0 {
			fmt.Fprintf(c, "GET /api/hub/state HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
		} else {
			fmt.Fprintf(c, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{", addr)
		}
		held = append(held, c)
	}
	is.Equal(stateStatus(t, addr, 2*time.Second), http.StatusUnauthorized) // another client is answered at once
	refused := 0
	for _, c := range held[daemon.DefaultMaxConnsPerClient:] {
		if closed(c) {
			refused++
		}
	}
	is.Equal(refused, 500-daemon.DefaultMaxConnsPerClient) // the attacker's connections past its cap were closed
}

// A body sent a byte at a time is cut at the read deadline, and so are
// headers; a connection that sends nothing costs its place only until
// then.
func TestSlowRequestsAreCut(t *testing.T) {
	addr := serving(t, daemon.Config{ReadTimeout: 300 * time.Millisecond})
	for _, tc := range []struct{ name, start string }{
		{"headers", "GET /api/hub/state HTTP/1.1\r\nHost: " + addr + "\r\nX-Slow: "},
		{"body", "POST /login HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c := dialFrom(t, "127.0.0.1", addr)
			fmt.Fprint(c, tc.start)
			cut := make(chan error, 1)
			go func() {
				tick := time.NewTicker(50 * time.Millisecond) // a byte every 50 ms, 2 s of trickle at most
				defer tick.Stop()
				for range 40 {
					if _, err := c.Write([]byte("a")); err != nil {
						cut <- err
						return
					}
					<-tick.C
				}
				cut <- nil
			}()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := io.Copy(io.Discard, c) // until the server closes (an answer or not)
			is.True(!isTimeout(err))         // the server ended the connection
			is.True(<-cut != nil)            // while the client was still sending
		})
	}
}

// Over the total cap a new connection is closed before anything is read;
// a header block over its bound is refused.
func TestConnectionAndHeaderBounds(t *testing.T) {
	is := is.New(t)
	addr := serving(t, daemon.Config{MaxConns: 4})
	var held []net.Conn
	for range 4 {
		held = append(held, dialFrom(t, "127.0.0.1", addr))
	}
	extra := dialFrom(t, "127.0.0.3", addr)
	is.True(closed(extra)) // the fifth connection is closed at once
	held[0].Close()

	// The place frees once the server has seen that close; until then a
	// new connection is still over the cap and closed unread.
	var resp *http.Response
	deadline := time.Now().Add(5 * time.Second)
	for resp == nil && time.Now().Before(deadline) {
		c := dialFrom(t, "127.0.0.1", addr)
		fmt.Fprintf(c, "GET /api/hub/state HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", addr, strings.Repeat("h", 100<<10))
		resp, _ = http.ReadResponse(bufio.NewReader(c), nil)
	}
	is.True(resp != nil)                                              // answered once a place was free
	is.Equal(resp.StatusCode, http.StatusRequestHeaderFieldsTooLarge) // headers over 64 KiB are refused
}
