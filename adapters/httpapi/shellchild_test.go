package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testShells stands in for the shells of a workspace's child (the
// attach WebSocket of the protocol in adapters/child): the fake backend
// hands it what its own protocol does not serve. Shell "s1" greets with
// a hello naming the offset asked and echoes every message; "flood"
// greets, then sends numbered 32 KiB output chunks, as fast as they are
// taken, until flood bytes are sent; "exit" greets and closes with 1000
// "exited". Any other id is unknown (404), and offset "bad" is refused
// (400), before the upgrade.
type testShells struct {
	ws       string
	flood    int64
	requests atomic.Int64 // requests that reached the child
	sent     atomic.Int64 // output bytes the flood has written
	flooded  chan struct{}
	ends     chan childEnd // how each accepted attachment ended, at the child
}

// childEnd is how an attachment ended at the child: the close the Hub
// sent it (Code -1 when it broke without one).
type childEnd struct {
	code   websocket.StatusCode
	reason string
}

const floodChunk = 32 << 10

func newTestShells(ws string) *testShells {
	return &testShells{ws: ws, flood: 32 << 20, flooded: make(chan struct{}), ends: make(chan childEnd, 64)}
}

func (c *testShells) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.requests.Add(1)
	id, ok := strings.CutPrefix(r.URL.Path, "/s/"+c.ws+"/api/shells/")
	id, attach := strings.CutSuffix(id, "/attach")
	refuse := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	switch {
	case !ok || !attach || (id != "s1" && id != "flood" && id != "exit"):
		refuse(http.StatusNotFound, "unknown shell")
		return
	case r.URL.Query().Get("offset") == "bad":
		refuse(http.StatusBadRequest, "offset must be a non-negative integer")
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(64 << 10) // the child's bound
	ctx := context.Background()
	off := r.URL.Query().Get("offset")
	if off == "" {
		off = "0"
	}
	if conn.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"type":"hello","offset":%s,"readOnly":false,"cols":80,"rows":24}`, off)) != nil {
		return
	}
	switch id {
	case "exit":
		conn.Close(websocket.StatusNormalClosure, "exited")
	case "flood":
		go c.drain(conn) // reads nothing but the close
		chunk := make([]byte, floodChunk)
		for i := uint64(0); int64(i)*floodChunk < c.flood; i++ {
			binary.BigEndian.PutUint64(chunk, i)
			if conn.Write(ctx, websocket.MessageBinary, chunk) != nil {
				return
			}
			c.sent.Add(floodChunk)
		}
		close(c.flooded)
	default:
		for {
			typ, msg, err := conn.Read(ctx)
			if err != nil {
				c.ended(err)
				return
			}
			if conn.Write(ctx, typ, msg) != nil {
				return
			}
		}
	}
}

func (c *testShells) drain(conn *websocket.Conn) {
	_, _, err := conn.Read(context.Background())
	c.ended(err)
}

func (c *testShells) ended(err error) {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		ce.Code = -1
	}
	c.ends <- childEnd{ce.Code, ce.Reason}
}

// childEnded waits (a bounded time) for the next attachment to end at the
// child and returns how.
func (c *testShells) childEnded(t *testing.T) childEnd {
	t.Helper()
	select {
	case e := <-c.ends:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("the child's side of the attachment never ended")
		return childEnd{}
	}
}

// upgradeTransport is contractTransport for WebSocket handshakes: a 101
// is checked against the contract without reading its body (the
// connection), any other answer as contractTransport checks it.
type upgradeTransport struct {
	t    testing.TB
	base http.RoundTripper
}

func (u upgradeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr != nil {
				return nil, rerr
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if msg := checkResponse(req, resp, body); msg != "" {
				u.t.Errorf("contract violation: %s %s -> %d: %s\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, msg, body)
			}
		}
		return resp, err
	}
	if msg := checkResponse(req, resp, nil); msg != "" {
		u.t.Errorf("contract violation: %s %s -> 101: %s", req.Method, req.URL.Path, msg)
	}
	return resp, nil
}

// attach dials the attach WebSocket of shell on ws with the headers given
// as name, value pairs, returning the connection or the refusal.
func (s *testServer) attach(t *testing.T, ws, shell, query string, headers ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/s/" + ws + "/api/shells/" + shell + "/attach" + query
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h,
		HTTPClient: &http.Client{Transport: upgradeTransport{t: t, base: s.Server.Client().Transport}}})
	if conn != nil {
		t.Cleanup(func() { conn.CloseNow() })
	}
	return conn, resp, err
}

// mustAttach is attach that fails the test on a refusal.
func (s *testServer) mustAttach(t *testing.T, ws, shell string, headers ...string) *websocket.Conn {
	t.Helper()
	conn, resp, err := s.attach(t, ws, shell, "", headers...)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("attach %s/%s: %d %v", ws, shell, status, err)
	}
	return conn
}

// upgradeHeaders are the headers of a WebSocket handshake, for requests
// sent without the WebSocket client (whose answers are checked by
// contractTransport).
func upgradeHeaders() []string {
	key := make([]byte, 16)
	rand.Read(key)
	return []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
		"Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key)}
}

// closeOf waits (a bounded time) for conn's next read to fail and returns
// the close it received (Code -1 when none).
func closeOf(conn *websocket.Conn) websocket.CloseError {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, _, err := conn.Read(ctx)
		if err == nil {
			continue // output before the close
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			ce.Code = -1
		}
		return ce
	}
}
