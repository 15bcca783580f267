package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/hub"
)

const (
	benchUser, benchPassword = "bench", "correct horse battery staple" // each Wharf's one user
	buildLimit               = 5 * time.Minute                         // the one `go build` of ./cmd/wharf
)

// benchLoginLimits are hub's documented defaults, spelled out so that W10
// is judged against the budget the Hub enforces.
var benchLoginLimits = hub.LoginLimits{PerAddress: 5, AddressWindow: time.Minute, PerName: 20, NameWindow: 15 * time.Minute}

// server is an HTTP server of this process on its own 127.0.0.1:0
// listener, served by a Daemon's Serve: Wharf and its baselines get the
// daemon's http.Server settings alike.
type server struct {
	addr     string
	accepted *atomic.Int64 // connections accepted
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	l.n.Add(int64(b2i(err == nil)))
	return c, err
}

// serve serves h through d until the group ends.
func (e *env) serve(d *daemon.Daemon, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, done := &server{addr: ln.Addr().String(), accepted: &atomic.Int64{}}, make(chan struct{})
	go func() { defer close(done); d.Serve(ctx, countingListener{ln, s.accepted}, h) }()
	e.onClose(func() { cancel(); <-done })
	return s, nil
}

// wharf is a Wharf under test with the benchmark user logged in.
type wharf struct {
	*server
	d       *daemon.Daemon
	session string // the user's bearer device session
}

// openWharf builds a Wharf with daemon.Open in a fresh 0700 temp state
// directory: adapt swaps ports (the live workloads' backend), wrap wraps
// the handler served (their tap). When the group ends it is closed (its
// sessions stopped) and its directory removed.
func (e *env) openWharf(ctx context.Context, adapt func(*hub.Ports), wrap func(http.Handler) http.Handler) (*wharf, error) {
	dir, err := mkTemp(e, "wharf-bench-state-")
	if err != nil {
		return nil, err
	}
	var child []string
	if e.bin != "" {
		child = []string{e.bin}
	}
	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir, SessionCommand: child, Adapt: adapt, Hub: hub.Config{Version: "bench", LoginLimits: benchLoginLimits}})
	if err != nil {
		return nil, err
	}
	e.onClose(func() { d.Close() })
	h, w := d.Handler(), &wharf{d: d}
	if wrap != nil {
		h = wrap(h)
	}
	if err = d.Hub().AddUser(ctx, benchUser, benchPassword); err == nil {
		w.server, err = e.serve(d, h)
	}
	if err == nil {
		w.session, _, err = w.login(ctx, "bench")
	}
	return w, err
}

// buildChild builds ./cmd/wharf once for the workspace sessions (the
// benchmark's own binary cannot be one); it runs from the module root.
func (e *env) buildChild(ctx context.Context) error {
	if e.bin != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "wharf-bench-bin-")
	if err != nil {
		return err
	}
	e.progress("building ./cmd/wharf for the workspace sessions")
	ctx, cancel := context.WithTimeout(ctx, buildLimit)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "wharf"), "./cmd/wharf").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("go build ./cmd/wharf (run from the module root): %w: %s", err, bytes.TrimSpace(out))
	}
	e.bin = filepath.Join(dir, "wharf")
	return nil
}

// mkTemp makes a temp dir removed when the group ends.
func mkTemp(e *env, prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		e.onClose(func() { os.RemoveAll(dir) })
	}
	return dir, err
}

// httpClient makes the benchmark's own calls: set-up, checks, W5's and
// W11's requests; never through a proxy from the environment.
var httpClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 512}, Timeout: time.Minute}

// call sends one request; body is JSON (a []byte as is, anything else
// marshalled; nil none). It returns the answer's status, head and body,
// and decodes a 200 answer into out when set; with out set, any other
// status is an error.
func call(ctx context.Context, addr, method, path string, hdr http.Header, body, out any) (int, http.Header, []byte, error) {
	b, ok := body.([]byte)
	if !ok && body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = hdr.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	switch {
	case err == nil && out != nil && resp.StatusCode != http.StatusOK:
		err = fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	case err == nil && out != nil:
		err = json.Unmarshal(raw, out)
	}
	return resp.StatusCode, resp.Header, raw, err
}

func bearer(sessionID string) http.Header {
	return http.Header{"Authorization": {"Bearer " + sessionID}}
}

// cookieName is the session cookie Wharf sets at its (non-default) port.
func (w *wharf) cookieName() string {
	_, port, _ := net.SplitHostPort(w.addr)
	return httpapi.CookiePrefix + "_hub_" + port
}

// browser is the headers of a cookie-authenticated browser fetch.
func (w *wharf) browser(cookie, origin, site string) http.Header {
	c := &http.Cookie{Name: w.cookieName(), Value: cookie}
	return http.Header{"Cookie": {c.String()}, "Origin": {origin}, "Sec-Fetch-Site": {site}}
}

// login logs the benchmark user in: the session id and the session
// cookie's value, which must be the same.
func (w *wharf) login(ctx context.Context, label string) (id, cookie string, err error) {
	var out struct{ SessionID string }
	_, h, _, err := call(ctx, w.addr, http.MethodPost, "/login", http.Header{"Origin": {"http://" + w.addr}, "Sec-Fetch-Site": {"same-origin"}},
		map[string]string{"name": benchUser, "password": benchPassword, "deviceLabel": label}, &out)
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == w.cookieName() {
			cookie = c.Value
		}
	}
	if err == nil && (out.SessionID == "" || cookie != out.SessionID) {
		err = errors.New("login: no session, or a cookie that does not carry it")
	}
	return out.SessionID, cookie, err
}

// register registers each folder (the Hub's own git makes it a
// repository; not started) and returns the ids, in order.
func (w *wharf) register(ctx context.Context, paths []string) (ids []string, err error) {
	for _, p := range paths {
		var act struct{ ID string }
		if err = w.post(ctx, "/api/hub/workspaces", map[string]any{"path": p, "init": true, "start": false}, &act); err != nil {
			return ids, err
		}
		ids = append(ids, act.ID)
	}
	return ids, nil
}

// lifecycle starts (op "start") or stops (op "stop") workspace id, and
// checks that the answer says it runs, or ran and no longer does.
func (w *wharf) lifecycle(ctx context.Context, id, op string) error {
	var act struct {
		ID                  string
		Running, WasRunning bool
	}
	err := w.post(ctx, "/api/hub/sessions/"+id+"/"+op, nil, &act)
	if err == nil && (act.ID != id || act.Running != (op == "start") || (op == "stop" && !act.WasRunning)) {
		err = fmt.Errorf("%s %s: unexpected answer %+v", op, id, act)
	}
	return err
}

// post is a bearer POST that must answer 200.
func (w *wharf) post(ctx context.Context, path string, body, out any) error {
	_, _, _, err := call(ctx, w.addr, http.MethodPost, path, bearer(w.session), body, out)
	return err
}
