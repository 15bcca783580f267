package codex_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/hub"
)

// fakeServer builds fakes/agentlogin/codexserver once per test binary.
var fakeServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "codexserver-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "codex")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/wharfhub/wharf/fakes/agentlogin/codexserver").CombinedOutput()
	if err != nil {
		return "", errors.New("build codexserver: " + string(out))
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := fakeServer(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// fake is one test's fake codex: its CODEX_HOME, its record and its log.
type fake struct {
	t      *testing.T
	home   string // CODEX_HOME
	record string // CODEXSERVER_RECORD
	log    *lockedBuffer
	env    []string
}

// newFake prepares a fake codex with the scripting variables extra.
func newFake(t *testing.T, extra ...string) *fake {
	t.Helper()
	bin, err := fakeServer()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fake{t: t, home: filepath.Join(dir, "codex-home"), record: filepath.Join(dir, "record"), log: &lockedBuffer{}}
	f.env = append([]string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "HOME=" + dir,
		"CODEX_HOME=" + f.home, "CODEXSERVER_RECORD=" + f.record}, extra...)
	return f
}

// driver is the Codex driver over the fake, found as `codex` on its PATH.
func (f *fake) driver() hub.AgentLoginDriver {
	return codex.New(codex.Options{Env: f.env,
		Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
}

// start starts a runtime over the fake; it is closed, and checked gone,
// when the test ends.
func (f *fake) start() hub.AgentLoginRuntime {
	f.t.Helper()
	rt, err := f.driver().Start(ctxFor(f.t))
	if err != nil {
		f.t.Fatal(err)
	}
	pid := codex.PID(rt)
	f.t.Cleanup(func() {
		rt.Close()
		if !groupGone(pid) {
			f.t.Error("codex's process group outlived Close")
		}
	})
	return rt
}

// recorded are the lines the fake recorded ("call <method>", "callback
// <uri>") that start with prefix and a space, without them.
func (f *fake) recorded(prefix string) []string {
	data, err := os.ReadFile(f.record)
	if err != nil && !os.IsNotExist(err) {
		f.t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), prefix+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// handledSoFar are the methods the fake handled, once it handled one
// more account/read: codex handles its input in order, so whatever was
// sent before (a notification, which has no answer) is in the record.
func handledSoFar(t *testing.T, f *fake, rt hub.AgentLoginRuntime) []string {
	t.Helper()
	if _, err := rt.Status(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	return f.recorded("call")
}

// auth is the content of the fake's auth.json; "" when there is none.
func (f *fake) auth() string {
	data, err := os.ReadFile(filepath.Join(f.home, "auth.json"))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

// ctxFor bounds one test's calls.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// settled waits for a flow or a runtime to be done, within a bound.
func settled(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal(what + " did not end")
	}
}

// noSecret checks that secret appears in none of texts.
func noSecret(t *testing.T, secret string, texts ...string) {
	t.Helper()
	is := is.New(t)
	for _, text := range texts {
		is.True(!strings.Contains(text, secret)) // the secret never shows
	}
}

// lockedBuffer is a log sink the driver's goroutines share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// asError is errors.As for *hub.Error.
func asError(err error, target **hub.Error) bool { return errors.As(err, target) }
