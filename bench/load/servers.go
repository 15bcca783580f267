package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// counter counts accepted connections.
type counter struct{ n atomic.Int64 }

func (c *counter) load() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

// countingListener counts the connections it accepts, so each run can show
// how many connections the load generator really used.
type countingListener struct {
	net.Listener
	accepted *counter
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.n.Add(1)
	}
	return c, err
}

// server is one HTTP server on its own 127.0.0.1:0 listener.
type server struct {
	base     string // http://127.0.0.1:port
	hostPort string
	accepted *counter
	srv      *http.Server
	done     chan error
}

// startServer serves handler on a fresh loopback port with the settings of
// cmd/wharf/serve.go.
func startServer(handler http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{
		hostPort: ln.Addr().String(),
		accepted: &counter{},
		done:     make(chan error, 1),
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn),
		},
	}
	s.base = "http://" + s.hostPort
	go func() { s.done <- s.srv.Serve(countingListener{ln, s.accepted}) }()
	return s, nil
}

func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}

// probeHandler is the baseline: a minimal net/http JSON handler answering
// a pre-serialized body, routed by a ServeMux method pattern.
func probeHandler(body []byte) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/hub/state", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return mux
}

// wharf is an in-process Wharf: the real hub over the SQLite and OS
// adapters, served by the real HTTP handler.
type wharf struct {
	*server
	hub   *hub.Hub
	store *sqlite.Store
	dir   string
}

// benchUser and benchPassword are the one user the benchmark creates.
const (
	benchUser     = "bench"
	benchPassword = "correct horse battery staple"
)

// benchLoginLimits are hub's documented defaults, spelled out so the
// budget the W10 verdict checks against is the one the Hub enforces.
var benchLoginLimits = hub.LoginLimits{
	PerAddress:    5,
	AddressWindow: time.Minute,
	PerName:       20,
	NameWindow:    15 * time.Minute,
}

// startWharf opens a fresh state directory, database and hub with the
// default argon2id cost, adds the benchmark user and serves the API.
// child is the command the local backend runs workspace sessions with (the
// session arguments follow it); nil leaves the backend's default, which
// cannot start sessions from this benchmark's own binary. factsTTL is
// hub.Config.FactsTTL: zero for the daemon's default, which every judged
// run uses.
func startWharf(ctx context.Context, child []string, factsTTL time.Duration) (*wharf, error) {
	dir, err := os.MkdirTemp("", "wharf-bench-")
	if err != nil {
		return nil, err
	}
	backend, err := local.New(local.Options{RuntimeDir: filepath.Join(dir, "sessions"), Command: child})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return openWharf(ctx, dir, backend, factsTTL, nil)
}

// openWharf is startWharf with the backend given: it takes over dir (a
// fresh temp dir, removed by close), and serves the API through wrap when
// wrap is not nil (the live workloads' tap).
func openWharf(ctx context.Context, dir string, backend hub.Backend, factsTTL time.Duration, wrap func(http.Handler) http.Handler) (*wharf, error) {
	w := &wharf{dir: dir}
	fail := func(err error) (*wharf, error) {
		w.close()
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fail(err)
	}
	var err error
	if w.store, err = sqlite.Open(filepath.Join(dir, "wharf.db")); err != nil {
		return fail(err)
	}
	w.hub, err = hub.New(hub.Config{Version: "bench", Password: hub.DefaultPasswordParams, LoginLimits: benchLoginLimits, FactsTTL: factsTTL},
		hub.Ports{Store: w.store, Clock: hub.SystemClock{}, FS: osfs.FS{}, Git: gitexec.New(gitexec.Options{}), Backend: backend})
	if err != nil {
		return fail(err)
	}
	if err := w.hub.AddUser(ctx, benchUser, benchPassword); err != nil {
		return fail(err)
	}
	var h http.Handler = httpapi.NewHandler(w.hub, httpapi.Options{})
	if wrap != nil {
		h = wrap(h)
	}
	if w.server, err = startServer(h); err != nil {
		return fail(err)
	}
	return w, nil
}

func (w *wharf) close() {
	if w.server != nil {
		w.server.close()
	}
	if w.hub != nil {
		w.hub.Close()
	}
	if w.store != nil {
		w.store.Close()
	}
	os.RemoveAll(w.dir)
}

// cookieName is the session cookie Wharf sets at this non-default port.
func (w *wharf) cookieName() string {
	_, port, _ := net.SplitHostPort(w.hostPort)
	return httpapi.CookiePrefix + "_hub_" + port
}

// login logs the benchmark user in and returns the session id and the
// value of the session cookie the answer set (which must be the same).
func (w *wharf) login(ctx context.Context, label string) (sessionID, cookie string, err error) {
	body, _ := json.Marshal(map[string]string{"name": benchUser, "password": benchPassword, "deviceLabel": label})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.base+"/login", bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", w.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := newClient().Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return "", "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("login: %s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	var out struct {
		SessionID string `json:"sessionId"`
		User      string `json:"user"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.SessionID == "" || out.User != benchUser {
		return "", "", fmt.Errorf("login: unexpected answer %q", raw)
	}
	for _, c := range resp.Cookies() {
		if c.Name == w.cookieName() {
			cookie = c.Value
		}
	}
	if cookie == "" {
		return "", "", fmt.Errorf("login: no %s cookie in the answer", w.cookieName())
	}
	if cookie != out.SessionID {
		return "", "", errors.New("login: the cookie does not carry the session id")
	}
	return out.SessionID, cookie, nil
}

// get performs one request and returns its status and body.
func get(ctx context.Context, method, url string, header http.Header) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header = header.Clone()
	client := newClient()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// bearer returns the W1 request headers.
func bearer(sessionID string) http.Header {
	return http.Header{"Authorization": {"Bearer " + sessionID}}
}

// browserCookie returns the W2 request headers: the session cookie plus the
// headers a browser sends on a same-origin fetch.
func (w *wharf) browserCookie(cookie, origin, site string) http.Header {
	return http.Header{
		"Cookie":         {(&http.Cookie{Name: w.cookieName(), Value: cookie}).String()},
		"Origin":         {origin},
		"Sec-Fetch-Site": {site},
	}
}

// deviceSessionHandle returns the handle of the caller's current device session.
func (w *wharf) deviceSessionHandle(ctx context.Context, sessionID string) (string, error) {
	status, body, err := get(ctx, http.MethodGet, w.base+"/api/hub/sessions", bearer(sessionID))
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("list sessions: status %d", status)
	}
	var list struct {
		Sessions []struct {
			Handle  string `json:"handle"`
			Current bool   `json:"current"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return "", err
	}
	for _, s := range list.Sessions {
		if s.Current {
			return s.Handle, nil
		}
	}
	return "", errors.New("list sessions: no current session")
}

// crossOriginResult is the W2 cross-origin oracle.
type crossOriginResult struct {
	Requests      int
	Forbidden     int
	Other         map[int]int
	StillActive   bool // the session survived every attempt
	GetStatus     int  // a cross-origin cookie GET /api/hub/state (not origin-checked by design)
	PortCookieTag string
}

// crossOrigin sends n cookie-authenticated state-changing requests (revoke
// the session itself) from a foreign origin; each must be 403 and the
// session must stay active.
func (w *wharf) crossOrigin(ctx context.Context, n int) (crossOriginResult, error) {
	id, cookie, err := w.login(ctx, "bench cross-origin")
	if err != nil {
		return crossOriginResult{}, err
	}
	handle, err := w.deviceSessionHandle(ctx, id)
	if err != nil {
		return crossOriginResult{}, err
	}
	res := crossOriginResult{Requests: n, Other: map[int]int{}, PortCookieTag: w.cookieName()}
	variants := []http.Header{
		w.browserCookie(cookie, "http://evil.example", "cross-site"),
		w.browserCookie(cookie, "http://evil.example", "same-origin"), // lying Sec-Fetch-Site, foreign Origin
		w.browserCookie(cookie, w.base, "cross-site"),                 // right Origin, cross-site fetch
		w.browserCookie(cookie, "http://127.0.0.1:"+strconv.Itoa(otherPort(w.hostPort)), "same-site"),
	}
	for i := range n {
		status, _, err := get(ctx, http.MethodPost, w.base+"/api/hub/sessions/"+handle+"/revoke", variants[i%len(variants)])
		if err != nil {
			return res, err
		}
		if status == http.StatusForbidden {
			res.Forbidden++
		} else {
			res.Other[status]++
		}
	}
	status, _, err := get(ctx, http.MethodGet, w.base+"/api/hub/state", bearer(id))
	if err != nil {
		return res, err
	}
	res.StillActive = status == http.StatusOK
	res.GetStatus, _, err = get(ctx, http.MethodGet, w.base+"/api/hub/state", variants[0])
	return res, err
}

// otherPort returns a port other than hostPort's, for a same-host foreign
// origin.
func otherPort(hostPort string) int {
	_, p, _ := net.SplitHostPort(hostPort)
	n, _ := strconv.Atoi(p)
	if n == 65535 {
		return n - 1
	}
	return n + 1
}
