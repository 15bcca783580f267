package local_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The test binary doubles as the session child. The backend hands a child
// only allowlisted variables, so the mode cannot come from the test's own
// environment: the child's Command is `env WHARF_TEST_SESSION=<mode> ...
// <test binary>`, which sets it after the sanitizing.
const (
	modeEnv = "WHARF_TEST_SESSION"
	outEnv  = "WHARF_TEST_OUT" // a file (or FIFO) some modes write to
)

// The child modes.
const (
	modeServe      = "serve"       // a real session
	modeIgnoreTerm = "ignore-term" // a real session that ignores SIGTERM
	modeReportEnv  = "report-env"  // writes its environment to $WHARF_TEST_OUT, then serves
	modeGrandchild = "grandchild"  // starts `sleep` writing its pid into the FIFO $WHARF_TEST_OUT, then serves
	modeExitEarly  = "exit-early"  // complains on stderr and exits 1
	modeSilent     = "silent"      // never ready; waits for stdin's EOF
	modeBadLine    = "bad-line"    // prints a wrong first line, then waits
)

// secretOutput is what modeExitEarly writes to stderr; it must reach the
// log and never an error message.
const secretOutput = "secret-stderr-output"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(modeEnv); ok {
		os.Exit(testChild(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func testChild(mode string, args []string) int {
	// The test binary is the session's wharf too: the projection names it
	// (the backend's Command) as git's credential helper and gpg program.
	if len(args) > 0 {
		switch args[0] {
		case "git-credential":
			if err := local.RunGitCredential(context.Background(), args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
				fmt.Fprintln(os.Stderr, "wharf git-credential:", err)
				return 1
			}
			return 0
		case "gpg":
			return local.RunGPG(context.Background(), args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
		}
	}
	if len(args) == 0 || args[0] != "session" {
		fmt.Fprintln(os.Stderr, "test child: not a session command:", args)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	switch mode {
	case modeIgnoreTerm:
		stop()
		signal.Ignore(syscall.SIGTERM)
		ctx = context.Background()
	case modeReportEnv:
		if err := os.WriteFile(os.Getenv(outEnv), []byte(strings.Join(os.Environ(), "\n")), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case modeGrandchild:
		if err := startGrandchild(os.Getenv(outEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case modeExitEarly:
		fmt.Fprintln(os.Stderr, secretOutput+": giving up")
		return 1
	case modeSilent:
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case modeBadLine:
		fmt.Println("hello")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	if err := child.Run(ctx, args[1:], os.Stdin, os.Stdout, os.Stderr, child.Options{Agents: sessionAgents}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sessionAgents is the test child's coding agents: one in-process agent,
// porttest.SessionAgent, as the Backend suite wants, playing the script
// each message names (fakes/agentscript).
func sessionAgents([]string, map[string][]string, chat.TerminalWatcher, *slog.Logger) chat.AgentRuntime {
	rt := fakes.NewAgentRuntime(chat.AgentDescriptor{ID: porttest.SessionAgent, Name: "Scripted", Availability: chat.AgentAvailable})
	rt.SetAutoplay(true)
	return rt
}

// startGrandchild starts `sleep 60` with its stdout on fifo and writes its
// pid there. The child then closes its own end, so the reader sees EOF
// exactly when the grandchild is gone.
func startGrandchild(fifo string) error {
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("sleep", "60")
	cmd.Stdout = f
	if err := cmd.Start(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, cmd.Process.Pid)
	return err
}

// logBuffer collects a backend's log; it outlives the test safely.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newBackend returns a backend whose children run the test binary in mode
// with extra variables; opts may set timeouts, Env and the like.
func newBackend(t *testing.T, mode string, opts local.Options, extra ...string) (*local.Backend, *logBuffer) {
	t.Helper()
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env command:", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := new(logBuffer)
	if opts.RuntimeDir == "" {
		opts.RuntimeDir = filepath.Join(t.TempDir(), "run")
	}
	if opts.Command == nil {
		// The race detector sleeps a second before a process exits unless
		// told not to, which would blur the timing of stops.
		race := "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
		opts.Command = append(append([]string{env, modeEnv + "=" + mode, race}, extra...), exe)
	}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := local.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b, logs
}

// testTimeout bounds every wait of these tests.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startSession starts a session of id in a fresh folder and stops it at the
// end of the test.
func startSession(t *testing.T, b hub.Backend, id string) hub.WorkspaceSession {
	t.Helper()
	rs, err := b.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: id, Path: t.TempDir()})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		rs.Stop(ctx)
	})
	return rs
}

// waitClosed fails the test unless ch closes within testTimeout.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testTimeout):
		t.Fatalf("%s: not within %s", what, testTimeout)
	}
}

// procGone reports whether pid no longer exists, where /proc can tell.
func procGone(pid int) bool {
	if _, err := os.Stat("/proc/self"); err != nil {
		return true // no /proc: the reap itself is the evidence
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}

func TestBackend(t *testing.T) {
	t.Parallel()
	porttest.Backend(t, func(t *testing.T) (hub.Backend, string) {
		b, _ := newBackend(t, modeServe, local.Options{DataDir: filepath.Join(t.TempDir(), "workspaces")})
		// A small folder keeps the document feed's indexing quick.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# alpha\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return b, dir
	})
}

func TestNew(t *testing.T) {
	t.Parallel()
	t.Run("creates a private runtime directory", func(t *testing.T) {
		is := is.New(t)
		dir := filepath.Join(t.TempDir(), "state", "run")
		b, err := local.New(local.Options{RuntimeDir: dir})
		is.NoErr(err)               // created
		is.Equal(b.Name(), "local") // named
		fi, err := os.Stat(dir)
		is.NoErr(err)
		is.Equal(fi.Mode().Perm()&0o077, os.FileMode(0)) // closed to group and others
	})
	t.Run("refuses an open runtime directory", func(t *testing.T) {
		is := is.New(t)
		dir := filepath.Join(t.TempDir(), "run")
		is.NoErr(os.Mkdir(dir, 0o700))
		is.NoErr(os.Chmod(dir, 0o755))
		_, err := local.New(local.Options{RuntimeDir: dir})
		is.True(err != nil && strings.Contains(err.Error(), "open to group or others")) // refused
	})
	t.Run("refuses a runtime directory too long for sockets", func(t *testing.T) {
		is := is.New(t)
		dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
		_, err := local.New(local.Options{RuntimeDir: dir})
		is.True(err != nil && strings.Contains(err.Error(), "too long for Unix sockets")) // refused, clearly
		_, err = os.Stat(dir)
		is.True(os.IsNotExist(err)) // before creating anything
	})
	t.Run("refuses a runtime directory ssh would expand", func(t *testing.T) {
		is := is.New(t)
		for _, name := range []string{"a${HOME}b", "a\nb"} {
			dir := filepath.Join(t.TempDir(), name)
			_, err := local.New(local.Options{RuntimeDir: dir})
			is.True(err != nil && strings.Contains(err.Error(), "choose another state directory")) // refused, clearly
			_, err = os.Stat(dir)
			is.True(os.IsNotExist(err)) // before creating anything
		}
	})
	t.Run("requires a runtime directory", func(t *testing.T) {
		is := is.New(t)
		_, err := local.New(local.Options{})
		is.True(err != nil) // refused
	})
}
