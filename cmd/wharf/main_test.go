package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestMain doubles as the wharf binary: with WHARF_TEST_MAIN=1 the test
// binary runs main() instead of the tests, so tests can start the daemon
// as a real child process (see process_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("WHARF_TEST_MAIN") == "1" {
		if os.Getenv("WHARF_TEST_UMASK_000") == "1" {
			syscall.Umask(0) // as a careless service manager might start it
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testTimeout bounds every test against a hang, not its speed: the race
// detector makes argon2 slow, and CI runs this package beside the browser
// tests on two busy cores, where TestUser (16 s alone) once took 63 s and
// ran out of a 60 s bound with nothing stuck.
const testTimeout = 3 * time.Minute

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// output is a goroutine-safe writer that remembers everything written,
// reports its first line on firstLine and lets a test wait for content.
type output struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	sentLine  bool
	firstLine chan string
	changed   chan struct{} // closed and replaced on every write
}

func newOutput() *output {
	return &output{firstLine: make(chan string, 1), changed: make(chan struct{})}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if line, _, ok := bytes.Cut(o.buf.Bytes(), []byte("\n")); ok && !o.sentLine {
		o.firstLine <- string(line)
		o.sentLine = true
	}
	close(o.changed)
	o.changed = make(chan struct{})
	return len(p), nil
}

// waitFor returns the output once ok accepts it, or fails when ctx ends.
func (o *output) waitFor(ctx context.Context, ok func(string) bool) (string, error) {
	for {
		o.mu.Lock()
		s, changed := o.buf.String(), o.changed
		o.mu.Unlock()
		if ok(s) {
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, context.Cause(ctx)
		}
	}
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// envOf returns a getenv over a fixed environment.
func envOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// serveRun is `wharf serve` running in-process.
type serveRun struct {
	url    string // as printed on stdout, with the trailing slash
	port   string
	stderr *output
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// startServe runs `wharf serve --listen 127.0.0.1:0 --log-level debug` on
// stateDir plus extra flags, and waits for the URL line. The daemon is
// stopped at the end of the test if the test did not stop it.
func startServe(ctx context.Context, t *testing.T, env map[string]string, stateDir string, extra ...string) *serveRun {
	t.Helper()
	d, err := tryServe(ctx, env, stateDir, extra...)
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { d.stop() })
	return d
}

// tryServe is startServe returning run's error when it exits before
// printing its URL.
func tryServe(ctx context.Context, env map[string]string, stateDir string, extra ...string) (*serveRun, error) {
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", stateDir, "--log-level", "debug"}, extra...)
	runCtx, cancel := context.WithCancel(ctx)
	stdout := newOutput()
	d := &serveRun{stderr: newOutput(), cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- run(runCtx, args, envOf(env), strings.NewReader(""), stdout, d.stderr) }()
	select {
	case d.url = <-stdout.firstLine:
	case err := <-d.done:
		cancel()
		return nil, err
	case <-ctx.Done():
		cancel()
		return nil, context.Cause(ctx)
	}
	u, err := url.Parse(d.url)
	if err != nil {
		d.stop()
		return nil, err
	}
	d.port = u.Port()
	return d, nil
}

// stop cancels the daemon's context and returns run's result; it fails
// when run does not return promptly.
func (d *serveRun) stop() error {
	d.once.Do(func() {
		d.cancel()
		select {
		case d.err = <-d.done:
		case <-time.After(5 * time.Second):
			d.err = context.DeadlineExceeded
		}
	})
	return d.err
}

// bannerRE matches the first-user banner: the password itself on a
// terminal, else the path of the file that holds it.
var bannerRE = regexp.MustCompile(`(?s)\nwharf: created the first user "([^"]+)"(?: with password:|; its password is in)\n\n    (\S+)\n.*?wharf user passwd \S+\n\n`)

// firstPassword returns the user and password of the first-user banner in
// stderr (reading the file it names, when it names one), and stderr
// without the banner.
func firstPassword(stderr string) (name, password, rest string) {
	m := bannerRE.FindStringSubmatchIndex(stderr)
	if m == nil {
		return "", "", stderr
	}
	password = stderr[m[4]:m[5]]
	if filepath.IsAbs(password) {
		b, err := os.ReadFile(password)
		if err != nil {
			return "", "", stderr
		}
		password = strings.TrimSuffix(string(b), "\n")
	}
	return stderr[m[2]:m[3]], password, stderr[:m[0]] + stderr[m[1]:]
}

// newClient returns an HTTP client without a cookie jar or proxy; roots,
// when set, are the only trusted CAs.
func newClient(t *testing.T, roots *x509.CertPool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// call sends a request (body as JSON when non-nil, bearer when non-empty)
// and returns the response with its body read.
func call(ctx context.Context, t *testing.T, c *http.Client, method, u, bearer string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, u, err)
	}
	return resp, b
}

type loginResult struct {
	SessionID string `json:"sessionId"`
	User      string `json:"user"`
}

// login posts /login and returns the response and, on 200, the session.
func login(ctx context.Context, t *testing.T, c *http.Client, base, name, password string) (*http.Response, loginResult) {
	t.Helper()
	resp, body := call(ctx, t, c, "POST", base+"login", "",
		map[string]string{"name": name, "password": password, "deviceLabel": "e2e test"})
	var res loginResult
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatalf("login body %q: %v", body, err)
		}
	}
	return resp, res
}

// authStatus is the status of GET /api/hub/state with bearer.
func authStatus(ctx context.Context, t *testing.T, c *http.Client, base, bearer string) int {
	t.Helper()
	resp, _ := call(ctx, t, c, "GET", base+"api/hub/state", bearer, nil)
	return resp.StatusCode
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func stateDir(t *testing.T) string { return filepath.Join(t.TempDir(), "state") }

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string // "" for success
		wantStdout string // prefix
		wantStderr string // substring
	}{
		{name: "help", args: []string{"help"}, wantStdout: "usage:"},
		{name: "no command", args: nil, wantErr: "no command given", wantStderr: "usage:"},
		{name: "unknown command", args: []string{"frob"}, wantErr: `unknown command "frob"`, wantStderr: "usage:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var stdout, stderr bytes.Buffer
			err := run(testContext(t), tc.args, envOf(nil), strings.NewReader(""), &stdout, &stderr)
			if tc.wantErr == "" {
				is.NoErr(err) // the command succeeds
			} else {
				is.True(err != nil && strings.Contains(err.Error(), tc.wantErr)) // the command fails with a clear error
			}
			is.True(strings.HasPrefix(stdout.String(), tc.wantStdout)) // stdout starts as expected
			is.True(strings.Contains(stderr.String(), tc.wantStderr))  // stderr says what is expected
		})
	}
}

func TestVersion(t *testing.T) {
	is := is.New(t)
	var stdout bytes.Buffer
	is.NoErr(run(testContext(t), []string{"version"}, envOf(nil), nil, &stdout, io.Discard)) // version succeeds
	out := stdout.String()
	is.True(strings.HasPrefix(out, "wharf "))            // the line names the product
	is.Equal(strings.Count(out, "\n"), 1)                // exactly one line
	is.True(len(strings.TrimSpace(out)) > len("wharf ")) // and carries a version
}
