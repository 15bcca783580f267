// Package githttptest serves repositories to tests as a Git host does:
// `git http-backend` behind net/http/cgi on loopback, asking for basic
// auth, and remembering the passwords it was sent — so a test can prove
// which credential reached which host, and that nothing else did.
package githttptest

import (
	"crypto/subtle"
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Server is a loopback Git host over HTTP(S).
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

// New serves the repositories under root, over TLS when tls is set (the
// certificate is httptest's: CAFile writes it for git), to user with
// password only. It skips the test when git has no http-backend.
func New(t *testing.T, root, user, password string, tls bool) *Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("SKIPPED: git-http-backend is not installed with git (apt-get install git):", err)
	}
	s := &Server{}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if ok {
			s.mu.Lock()
			s.seen = append(s.seen, p)
			s.mu.Unlock()
		}
		if !ok || u != user || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	if tls {
		s.Server = httptest.NewTLSServer(handler)
	} else {
		s.Server = httptest.NewServer(handler)
	}
	t.Cleanup(s.Close)
	return s
}

// Host is the server's host:port, as a credential names it.
func (s *Server) Host() string {
	u, _ := url.Parse(s.URL)
	return u.Host
}

// Passwords returns every password the server was sent, in order.
func (s *Server) Passwords() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// CAFile writes the TLS server's certificate for git to trust
// (GIT_SSL_CAINFO, http.sslCAInfo).
func (s *Server) CAFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
