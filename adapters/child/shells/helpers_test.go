package shells

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wait bounds every wait of these tests.
const wait = 10 * time.Second

// testEnv is a shell's environment in tests: /bin/sh, a quiet prompt.
func testEnv(t testing.TB) []string {
	return []string{"SHELL=/bin/sh", "PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "PS1=$ ", "ENV=", "LANG=C"}
}

// newTestRegistry is a registry over a temporary folder, closed with the
// test, and a server of its attach WebSocket at /{id}.
func newTestRegistry(t testing.TB, opts Options) (*Registry, *httptest.Server) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Env == nil {
		opts.Env = testEnv(t)
	}
	r := New(opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.ServeAttach(w, req, strings.TrimPrefix(req.URL.Path, "/"))
	}))
	t.Cleanup(func() {
		srv.Close()
		r.Close()
	})
	return r, srv
}

// term is a test's attached client.
type term struct {
	t      testing.TB
	conn   *websocket.Conn
	hello  helloMessage
	out    bytes.Buffer // output received since the hello
	texts  []map[string]any
	ack    bool // acknowledge output as it arrives
	closed websocket.StatusCode
	reason string
}

// attach dials the shell id at the query (e.g. "?offset=3") and reads
// its hello.
func attach(t testing.TB, srv *httptest.Server, id, query string, ack bool) *term {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/"+id+query, nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	conn.SetReadLimit(1 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	tm := &term{t: t, conn: conn, ack: ack, closed: -1}
	typ, b, err := conn.Read(ctx)
	if err != nil || typ != websocket.MessageText || json.Unmarshal(b, &tm.hello) != nil || tm.hello.Type != TypeHello {
		t.Fatalf("hello: %v %s", err, b)
	}
	return tm
}

// send writes one text message.
func (tm *term) send(v any) {
	tm.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	b, ok := v.(string)
	if !ok {
		raw, _ := json.Marshal(v)
		b = string(raw)
	}
	if err := tm.conn.Write(ctx, websocket.MessageText, []byte(b)); err != nil {
		tm.t.Fatalf("send: %v", err)
	}
}

// input types s.
func (tm *term) input(s string) { tm.send(map[string]string{"type": "input", "data": s}) }

// offset is the absolute offset after the output received.
func (tm *term) offset() int64 { return tm.hello.Offset + int64(tm.out.Len()) }

// readUntil reads messages until done says so or the connection closes,
// within the wait bound; false when it closed first.
func (tm *term) readUntil(done func() bool) bool {
	tm.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for !done() {
		typ, b, err := tm.conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				tm.t.Fatalf("nothing within %s; output so far: %q", wait, tail(tm.out.String()))
			}
			tm.closed, tm.reason = websocket.CloseStatus(err), closeReason(err)
			return false
		}
		if typ == websocket.MessageBinary {
			tm.out.Write(b)
			if tm.ack {
				tm.send(map[string]any{"type": "ack", "offset": tm.offset()})
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			tm.t.Fatalf("text message %q: %v", b, err)
		}
		tm.texts = append(tm.texts, m)
		if m["type"] == TypeSkip {
			tm.hello.Offset = int64(m["offset"].(float64)) - int64(tm.out.Len())
		}
	}
	return true
}

// see reads until the output holds s.
func (tm *term) see(s string) bool {
	return tm.readUntil(func() bool { return strings.Contains(tm.out.String(), s) })
}

// readClose reads until the connection closes and returns its code.
func (tm *term) readClose() websocket.StatusCode {
	tm.t.Helper()
	tm.readUntil(func() bool { return false })
	return tm.closed
}

func closeReason(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// within waits for ch, failing the test after the wait bound.
func within(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("no %s within %s", what, wait)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
