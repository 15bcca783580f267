package gemini_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/gemini"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow/ptyflowtest"
	"github.com/wharfhub/wharf/hub"
)

// fakeDir holds the fake `gemini` (fakes/agentlogin/geminicli), built
// once for the package's tests.
var fakeDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "geminicli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeDir = dir
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "gemini"), "github.com/wharfhub/wharf/fakes/agentlogin/geminicli").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the fake gemini: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logBuffer is a log the driver writes to from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// setup is a driver with a HOME of its own (which marks every process it
// starts), env added to its environment, and its log.
type setup struct {
	driver hub.AgentLoginDriver
	home   string
	log    *logBuffer
}

func newSetup(t *testing.T, command []string, env ...string) *setup {
	home := t.TempDir()
	log := &logBuffer{}
	d := gemini.New(gemini.Options{
		Command: command,
		Env:     append([]string{"HOME=" + home, "PATH=" + fakeDir + ":/usr/bin:/bin"}, env...),
		Logger:  slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	s := &setup{driver: d, home: home, log: log}
	t.Cleanup(func() {
		if pids := s.left(); len(pids) > 0 {
			t.Errorf("processes left running: %v", pids)
		}
	})
	return s
}

// start starts a runtime, closed when the test ends.
func (s *setup) start(t *testing.T) hub.AgentLoginRuntime {
	t.Helper()
	rt, err := s.driver.Start(t.Context())
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// store is the path of a file of the setup's Gemini CLI store.
func (s *setup) store(name string) string { return filepath.Join(s.home, ".gemini", name) }

// write writes a file of the store.
func (s *setup) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(s.home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.store(name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// left lists the processes the driver left running.
func (s *setup) left() []int { return ptyflowtest.Left("HOME=" + s.home) }

// within waits for ch, failing the test after d.
func within(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
}
