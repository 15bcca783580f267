// Command opencodeserve is the fake `opencode serve` of the tests: an
// HTTP server speaking the login routes of OpenCode 1.18.33's server with
// their paths, JSON shapes, error bodies and quirks (a provider cache kept
// until /instance/dispose, a 400 that repeats the request), offline and
// deterministic. Logins land where OpenCode keeps them:
// $XDG_DATA_HOME/opencode/auth.json (else ~/.local/share/opencode).
//
// Usage, as the real one: opencodeserve serve --hostname H --port P.
// It prints "opencode server listening on http://H:PORT" once it listens
// and requires OPENCODE_SERVER_PASSWORD (basic authentication, user
// OPENCODE_SERVER_USERNAME, default "opencode") when that is set.
//
// Its providers (catalog.go): opencode (connected by itself), anthropic,
// openai, zeta (plain key providers), fakecode (a login finished by a
// pasted code; the right code is "fake-code-ok"), fakeloop (a login
// finished by a redirect to a loopback listener of its own, which records
// every request it gets) and fakedevice (a login finished on a page: a
// GET of the login's URL approves it).
//
// What it records, for the tests, under $XDG_STATE_HOME/opencodeserve
// (else ~/.local/state/opencodeserve): pid (its process id), addr (its
// base URL), child (the lingering child's pid, see below), callbacks
// (one line "METHOD REQUEST-URI" per request a loopback listener got).
//
// Knobs (environment):
//
//	FAKE_OPENCODESERVE_CHILD=1        start a child that lingers (a group to kill)
//	FAKE_OPENCODESERVE_SILENT=1       never print the listening line
//	FAKE_OPENCODESERVE_LINE=text      print text instead of the listening line
//	FAKE_OPENCODESERVE_REFUSE_AUTH=1  answer PUT /auth with the 400 that repeats the request
//	FAKE_OPENCODESERVE_IGNORE_TERM=1  ignore SIGTERM, as OpenCode sometimes does
package main

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "linger" {
		select {} // the child: lives until its group is killed
	}
	host, port := "127.0.0.1", "0"
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: opencodeserve serve [--hostname H] [--port P]")
		os.Exit(2)
	}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--hostname":
			i++
			host = args[i]
		case "--port":
			i++
			port = args[i]
		}
	}
	if os.Getenv("FAKE_OPENCODESERVE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	s := newServer()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "opencodeserve:", err)
		os.Exit(1)
	}
	base := "http://" + ln.Addr().String()
	s.record("pid", strconv.Itoa(os.Getpid()))
	s.record("addr", base)
	if os.Getenv("FAKE_OPENCODESERVE_CHILD") == "1" {
		child := exec.Command(os.Args[0], "linger")
		if err := child.Start(); err == nil {
			s.record("child", strconv.Itoa(child.Process.Pid))
		}
	}
	if os.Getenv("OPENCODE_SERVER_PASSWORD") == "" {
		fmt.Println("Warning: OPENCODE_SERVER_PASSWORD is not set; server is unsecured.")
	}
	switch line := os.Getenv("FAKE_OPENCODESERVE_LINE"); {
	case os.Getenv("FAKE_OPENCODESERVE_SILENT") == "1":
	case line != "":
		fmt.Println(line)
	default:
		fmt.Println("opencode server listening on " + base)
	}
	if err := http.Serve(ln, s.authenticated(s.routes())); err != nil {
		os.Exit(1)
	}
}

// server is the fake's state.
type server struct {
	mu sync.Mutex
	// snapshot is the connected providers as of the first request that
	// needed them, as OpenCode caches them; nil until then and after
	// /instance/dispose.
	snapshot []connected
	// pending is the browser login waiting per provider (dropped by
	// /instance/dispose, as in OpenCode).
	pending map[string]*pendingLogin
}

func newServer() *server { return &server{pending: map[string]*pendingLogin{}} }

// authenticated requires the server's password when one is set.
func (s *server) authenticated(next http.Handler) http.Handler {
	pass := os.Getenv("OPENCODE_SERVER_PASSWORD")
	user := os.Getenv("OPENCODE_SERVER_USERNAME")
	if user == "" {
		user = "opencode"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pass != "" {
			u, p, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="Secure Area"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// routes are the routes of the real server the login driver uses.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /global/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"healthy": true, "version": "1.18.33"})
	})
	mux.HandleFunc("GET /provider", s.listProviders)
	mux.HandleFunc("GET /config/providers", s.configProviders)
	mux.HandleFunc("GET /provider/auth", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, authMethods)
	})
	mux.HandleFunc("PUT /auth/{id}", s.setAuth)
	mux.HandleFunc("DELETE /auth/{id}", s.removeAuth)
	mux.HandleFunc("POST /provider/{id}/oauth/authorize", s.authorize)
	mux.HandleFunc("POST /provider/{id}/oauth/callback", s.callback)
	mux.HandleFunc("POST /instance/dispose", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.snapshot = nil
		for id, p := range s.pending {
			p.close()
			delete(s.pending, id)
		}
		s.mu.Unlock()
		writeJSON(w, 200, true)
	})
	return mux
}

// stateDir is where the fake records what the tests read.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "opencodeserve")
	}
	return filepath.Join(os.Getenv("HOME"), ".local", "state", "opencodeserve")
}

// record writes one record file.
func (s *server) record(name, value string) {
	dir := stateDir()
	if err := os.MkdirAll(dir, 0o700); err == nil {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(value), 0o600)
	}
}

// appendRecord appends a line to a record file.
func appendRecord(name, line string) {
	dir := stateDir()
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line + "\n")
}
