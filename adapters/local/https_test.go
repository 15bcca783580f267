package local_test

import (
	"crypto/subtle"
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// gitServer is a loopback HTTPS git server: git http-backend behind
// net/http/cgi, asking for basic auth as user with password token.
type gitServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // the passwords it was sent, right or wrong
}

// host is the server's host as a credential names it.
func (s *gitServer) host() string {
	u, _ := url.Parse(s.URL)
	return u.Host
}

// passwords returns what the server was sent.
func (s *gitServer) passwords() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// newGitServer serves the repositories under root.
func newGitServer(t *testing.T, root, user, token string) *gitServer {
	t.Helper()
	backend := filepath.Join(strings.TrimSpace(gitExecPath(t)), "git-http-backend")
	if !isExecutable(backend) {
		t.Skip("SKIPPED: git-http-backend is not installed with git (apt-get install git)")
	}
	s := &gitServer{}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if ok {
			s.mu.Lock()
			s.seen = append(s.seen, p)
			s.mu.Unlock()
		}
		if !ok || u != user || subtle.ConstantTimeCompare([]byte(p), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// gitExecPath is where git keeps its helper programs.
func gitExecPath(t *testing.T) string {
	t.Helper()
	out, err := execOutput(tool(t, "git", "git"), "--exec-path")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// caFile writes the servers' certificate (httptest's, one for all) for
// GIT_SSL_CAINFO.
func caFile(t *testing.T, s *gitServer) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGitOverHTTPSGetsTheTokenForItsHostOnlyAndNeverTheUsersNetrc(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const token = "tok-https-2f9c41d7"
	root := t.TempDir()
	git := tool(t, "git", "git")
	_, err := execOutput(git, "init", "-q", "--bare", filepath.Join(root, "repo.git"))
	is.NoErr(err)
	right := newGitServer(t, root, "ann", token)
	wrong := newGitServer(t, root, "ann", token) // another host:port, the same token would open it
	v, broker := newBroker()
	sealed, err := v.SealToken([]byte(token))
	is.NoErr(err)
	broker.LendToken(right.host(), fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	home := t.TempDir()
	// The user's own .netrc would let git into both servers: a session
	// must not get it.
	is.NoErr(os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine 127.0.0.1 login ann password "+token+"\n"), 0o600))
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Logins: []hub.SessionLogin{{Host: right.host(), CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}, home)
	ca := []string{"GIT_SSL_CAINFO=" + caFile(t, right), "GIT_TERMINAL_PROMPT=0"}

	out, err := l.run(t, t.TempDir(), ca, "", "git", "ls-remote", right.URL+"/repo.git")
	is.NoErr(err) // the right host lets git in with the Hub's token
	if err != nil {
		t.Log(out)
	}
	dest := filepath.Join(t.TempDir(), "clone")
	out, err = l.run(t, t.TempDir(), ca, "", "git", "clone", "-q", right.URL+"/repo.git", dest)
	is.NoErr(err) // and clones
	if err != nil {
		t.Log(out)
	}
	_, err = os.Stat(filepath.Join(dest, ".git"))
	is.NoErr(err) // a clone

	_, err = l.run(t, t.TempDir(), ca, "", "git", "ls-remote", wrong.URL+"/repo.git")
	is.True(err != nil)                 // another host gets nothing
	is.Equal(len(wrong.passwords()), 0) // not even a wrong password: neither the token nor the user's .netrc reached it

	broker.Revoke("t")
	_, err = l.run(t, t.TempDir(), ca, "", "git", "ls-remote", right.URL+"/repo.git")
	is.True(err != nil) // a revoked token is refused at the next request
	for _, p := range right.passwords() {
		is.Equal(p, token) // the right host only ever got the token
	}
	is.True(!strings.Contains(l.logs.String(), token)) // which no log line holds
}
