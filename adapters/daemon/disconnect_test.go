package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// gates lets a test stop a request inside the core: the request's
// X-Test-Gate header names a gate, and the store's first transaction
// under that request's context reports it entered, then waits for the
// client to leave (wait), goes on (signal) or fails (fail).
type gates struct {
	mu     sync.Mutex
	byName map[string]*gate
}

type gate struct {
	mode    string // "wait", "signal" or "fail"
	once    sync.Once
	entered chan struct{}
}

type gateKey struct{}

func (g *gates) arm(name, mode string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := &gate{mode: mode, entered: make(chan struct{})}
	g.byName[name] = gt
	return gt
}

// wrap puts the gate a request names into its context.
func (g *gates) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		gt := g.byName[r.Header.Get("X-Test-Gate")]
		g.mu.Unlock()
		if gt != nil {
			r = r.WithContext(context.WithValue(r.Context(), gateKey{}, gt))
		}
		h.ServeHTTP(w, r)
	})
}

// errDiskOnFire is the genuine failure the gate's fail mode produces.
var errDiskOnFire = errors.New("disk on fire")

type gatedStore struct{ hub.Store }

func (s gatedStore) pass(ctx context.Context) error {
	gt, _ := ctx.Value(gateKey{}).(*gate)
	if gt == nil {
		return nil
	}
	first := false
	gt.once.Do(func() { first = true; close(gt.entered) })
	switch {
	case !first:
	case gt.mode == "wait":
		<-ctx.Done()
	case gt.mode == "fail":
		return errDiskOnFire
	}
	return nil
}

func (s gatedStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	if err := s.pass(ctx); err != nil {
		return err
	}
	return s.Store.View(ctx, fn)
}

func (s gatedStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	if err := s.pass(ctx); err != nil {
		return err
	}
	return s.Store.Update(ctx, fn)
}

// syncLog is a goroutine-safe log buffer.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// logLine is one line of either format, read back.
type logLine struct {
	level, msg, op, route, raw string
}

var textAttr = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

func parseLine(t *testing.T, format, raw string) logLine {
	t.Helper()
	l := logLine{raw: raw}
	if format == "json" {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("a JSON log line does not parse: %q", raw)
		}
		l.level, _ = m["level"].(string)
		l.msg, _ = m["msg"].(string)
		l.op, _ = m["op"].(string)
		l.route, _ = m["route"].(string)
		return l
	}
	for _, m := range textAttr.FindAllStringSubmatch(raw, -1) {
		v := strings.Trim(m[2], `"`)
		switch m[1] {
		case "level":
			l.level = v
		case "msg":
			l.msg = v
		case "op":
			l.op = v
		case "route":
			l.route = v
		}
	}
	return l
}

const leaverPassword = "a long enough password"

// A load of clients that leave in the middle of their requests (inside
// the core's state read, during a login's key derivation, halfway
// through a request body, on an open live stream) leaves no ERROR and no
// WARN line in the daemon's log, in either format; a genuine failure
// still logs one ERROR line naming the operation and route pattern, and
// never the request's query.
func TestClientsThatLeaveMidRequestLeaveNoErrorInTheLog(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			is := is.New(t)
			var out syncLog
			h := slog.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
			if format == "json" {
				h = slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			g := &gates{byName: map[string]*gate{}}
			d, err := daemon.Open(t.Context(), daemon.Config{StateDir: privateDir(t), Logger: slog.New(h),
				Adapt: func(p *service.Ports) {
					p.Store = gatedStore{p.Store}
					p.Backend = slowBackend{fakes.NewBackend(), t}
				}})
			is.NoErr(err) // the daemon opens
			t.Cleanup(func() { d.Close() })
			is.NoErr(d.Hub().AddUser(t.Context(), "ann", leaverPassword))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			is.NoErr(err)
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- d.Serve(ctx, ln, g.wrap(d.Handler())) }()
			var stopped error
			var once sync.Once
			shutdown := func() error { once.Do(func() { stop(); stopped = <-served }); return stopped }
			t.Cleanup(func() { shutdown() })
			base := "http://" + ln.Addr().String()
			client := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(client.CloseIdleConnections)

			token := loginToken(t, client, base)
			// The state is read from the store until its first snapshot,
			// which a cancelled read leaves unmade: its rounds, and the
			// genuine failure, come before a workspace is registered.
			const rounds = 3
			// Inside the core's first read of the state (later ones are
			// answered from memory).
			leaveAtGate(t, client, g, "state", "wait", "GET", base+"/api/hub/state", token, "")
			for i := range rounds {
				// Inside the core's read of the device sessions.
				leaveAtGate(t, client, g, fmt.Sprintf("sessions%d", i), "wait", "GET", base+"/api/hub/sessions", token, "")
				// During a login's key derivation: the gate opens as the
				// login reads the user, just before the hash.
				leaveAtGate(t, client, g, fmt.Sprintf("login%d", i), "signal", "POST", base+"/login", "",
					`{"name":"ann","password":"`+leaverPassword+`"}`)
				leaveHalfwayThroughABody(t, ln.Addr().String(), token)
			}

			// A genuine failure is still an ERROR, named by operation and
			// route, without the query.
			g.arm("fail", "fail")
			req, _ := http.NewRequest("GET", base+"/api/hub/sessions?secret=s3cr3t", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("X-Test-Gate", "fail")
			resp, err := client.Do(req)
			is.NoErr(err)
			resp.Body.Close()
			is.Equal(resp.StatusCode, http.StatusInternalServerError) // the induced failure answers 500

			ws := startWorkspace(t, client, base, token)
			for range rounds {
				leaveAnOpenLiveStream(t, client, base, token, ws)
				leaveAProxiedResponse(t, client, base, token, ws)
			}

			is.NoErr(shutdown()) // the daemon shuts down; its lines are all written
			var loud []logLine
			debugFailures := map[string]int{}
			for _, raw := range out.lines() {
				l := parseLine(t, format, raw)
				is.True(!strings.Contains(raw, "s3cr3t")) // no line holds the query
				if l.level == "ERROR" || l.level == "WARN" {
					loud = append(loud, l)
				}
				if l.level == "DEBUG" && l.msg == "request failed" {
					debugFailures[l.op]++
				}
			}
			for _, l := range loud {
				t.Logf("loud line: %s", l.raw)
			}
			is.Equal(len(loud), 1)                                   // one ERROR or WARN line: the induced failure's
			is.Equal(loud[0].level, "ERROR")                         // at ERROR
			is.Equal(loud[0].op, "hubListDeviceSessions")            // naming the operation
			is.Equal(loud[0].route, "/api/hub/sessions")             // and the route pattern
			is.True(strings.Contains(loud[0].raw, "disk on fire"))   // with its cause
			is.Equal(debugFailures["hubGetState"], 1)                // the abandoned state read was logged at DEBUG
			is.Equal(debugFailures["hubListDeviceSessions"], rounds) // and so was each abandoned read of the sessions
		})
	}
}

// loginToken logs ann in and returns the session id.
func loginToken(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Post(base+"/login", "application/json", strings.NewReader(`{"name":"ann","password":"`+leaverPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		SessionID string `json:"sessionId"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		t.Fatalf("login: %s", resp.Status)
	}
	return body.SessionID
}

// leaveAtGate sends a request through the gate name (armed in mode) and
// cancels it once the request is inside the core.
func leaveAtGate(t *testing.T, c *http.Client, g *gates, name, mode, method, url, token, body string) {
	t.Helper()
	gt := g.arm(name, mode)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Gate", name)
	done := make(chan error, 1)
	go func() {
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %s", resp.Status)
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("%s %s (gate %s) ended before it reached the store: %v", method, url, name, err)
	case <-gt.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s (gate %s) never reached the store", method, url, name)
	}
	cancel()
	<-done
}

// leaveHalfwayThroughABody announces a 60,000-byte folder request, sends
// half of it and hangs up.
func leaveHalfwayThroughABody(t *testing.T, addr, token string) {
	t.Helper()
	c := dialFrom(t, "127.0.0.1", addr)
	fmt.Fprintf(c, "POST /api/hub/folders/create HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{\"parent\":\"%s", addr, token, strings.Repeat("a", 30000))
	c.Close()
}

// leaveAnOpenLiveStream opens the live stream, waits for its first
// frame (the server is inside the stream) and hangs up.
func leaveAnOpenLiveStream(t *testing.T, c *http.Client, base, token, ws string) {
	t.Helper()
	leaveAStream(t, c, base+"/api/hub/live?activity=1&ws="+ws, token, ": open")
}

// leaveAProxiedResponse asks the workspace session for a response that
// never ends, waits for its first bytes through the Hub's proxy and
// hangs up.
func leaveAProxiedResponse(t *testing.T, c *http.Client, base, token, ws string) {
	t.Helper()
	leaveAStream(t, c, base+"/s/"+ws+"/api/slow", token, "slow")
}

// leaveAStream GETs url, waits for a first line starting with first and
// hangs up.
func leaveAStream(t *testing.T, c *http.Client, url, token, first string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, resp.Status)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, first) {
		t.Fatalf("%s: no first line: %q, %v", url, line, err)
	}
	cancel()
	_, _ = io.Copy(io.Discard, resp.Body)
}

// startWorkspace registers and starts a workspace on a fresh folder and
// returns its id.
func startWorkspace(t *testing.T, c *http.Client, base, token string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"path": t.TempDir(), "init": true, "start": true})
	req, _ := http.NewRequest("POST", base+"/api/hub/workspaces", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var w struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&w) != nil || !w.Running {
		t.Fatalf("workspace: %s", resp.Status)
	}
	return w.ID
}

// slowBackend is the fake backend whose sessions also answer
// .../api/slow: a first line, then nothing until the client leaves.
type slowBackend struct {
	*fakes.Backend
	t *testing.T
}

func (b slowBackend) Start(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	inner, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fake := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "session" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return inner.Dial(ctx) }},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/api/slow") {
			fake.ServeHTTP(w, r)
			return
		}
		w.Write([]byte("slow\n"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})}
	go srv.Serve(ln)
	b.t.Cleanup(func() { srv.Close() })
	return slowSession{inner, ln.Addr().String()}, nil
}

type slowSession struct {
	hub.WorkspaceSession
	addr string
}

func (s slowSession) Dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.addr)
}
