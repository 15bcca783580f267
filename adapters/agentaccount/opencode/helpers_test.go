package opencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/opencode"
	"github.com/wharfhub/wharf/hub"
)

// binDir holds the programs the tests build; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opencode-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeServer builds the fake `opencode serve` once.
var fakeServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "opencodeserve")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/wharfhub/wharf/fakes/agentlogin/opencodeserve").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build opencodeserve: %v: %s", err, out)
	}
	return bin, nil
})

// home is a test's throwaway home: the environment of a runtime.
type home struct {
	dir string
	env []string
}

// newHome makes an empty home; extra variables are added to its
// environment.
func newHome(t *testing.T, extra ...string) *home {
	t.Helper()
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"), "XDG_DATA_HOME=" + filepath.Join(dir, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(dir, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(dir, ".cache")}
	return &home{dir: dir, env: append(env, extra...)}
}

// storePath is OpenCode's store in h.
func (h *home) storePath() string {
	return filepath.Join(h.dir, ".local", "share", "opencode", "auth.json")
}

// writeFile writes a file under h.
func (h *home) writeFile(t *testing.T, rel, content string) {
	t.Helper()
	is := is.New(t)
	p := filepath.Join(h.dir, rel)
	is.NoErr(os.MkdirAll(filepath.Dir(p), 0o700))     // its directory
	is.NoErr(os.WriteFile(p, []byte(content), 0o600)) // the file
}

// store reads OpenCode's store in h, secrets and all.
func (h *home) store(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	data, err := os.ReadFile(h.storePath())
	if os.IsNotExist(err) {
		return out
	}
	is := is.New(t)
	is.NoErr(err)                        // the store reads
	is.NoErr(json.Unmarshal(data, &out)) // as JSON
	return out
}

// record reads a record of the fake server ("" when absent).
func (h *home) record(name string) string {
	data, _ := os.ReadFile(filepath.Join(h.dir, ".local", "state", "opencodeserve", name))
	return strings.TrimSpace(string(data))
}

// pid is a recorded process id of the fake server.
func (h *home) pid(t *testing.T, name string) int {
	t.Helper()
	n, err := strconv.Atoi(h.record(name))
	if err != nil {
		t.Fatalf("no %s recorded", name)
	}
	return n
}

// logs is a log buffer safe for concurrent use.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// started is a runtime over the fake server.
type started struct {
	hub.AgentLoginRuntime
	home *home
	logs *logs
}

// start starts a runtime over the fake server in h; the test closes it.
func start(t *testing.T, h *home) *started {
	t.Helper()
	is := is.New(t)
	bin, err := fakeServer()
	is.NoErr(err) // the fake builds
	l := &logs{}
	d := opencode.New(opencode.Options{Command: []string{bin}, Env: h.env,
		Logger: slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rt, err := d.Start(ctx)
	is.NoErr(err) // the runtime starts
	t.Cleanup(rt.Close)
	return &started{AgentLoginRuntime: rt, home: h, logs: l}
}

// ctx is a test's bounded context.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// target finds a target of a status.
func target(st hub.AgentLoginStatus, id string) (hub.AgentLoginTarget, bool) {
	for _, t := range st.Targets {
		if t.ID == id {
			return t, true
		}
	}
	return hub.AgentLoginTarget{}, false
}

// settled waits for a flow to settle and returns its outcome.
func settled(t *testing.T, f hub.AgentLoginFlow) error {
	t.Helper()
	select {
	case <-f.Done():
		return f.Err()
	case <-time.After(30 * time.Second):
		t.Fatal("the login did not settle")
		return nil
	}
}

// field is the field an error names ("" when none).
func field(err error) string {
	if e, ok := err.(*hub.Error); ok && e.Details != nil {
		return e.Details.Field
	}
	return ""
}

// processesOf lists the processes running with h as their HOME: the
// runtime's server and whatever it started.
func processesOf(h *home) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == "HOME="+h.dir {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
