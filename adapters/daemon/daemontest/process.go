package daemontest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// FirstUser is the name of the first user a daemon started here creates:
// Start sets $USER to it unless Options.User says otherwise.
const FirstUser = "ann"

// FirstPasswordFile is the file of the state directory to which a daemon
// without a terminal writes the first user's password.
const FirstPasswordFile = "first-user-password"

// servingLog is the log line a daemon writes once it serves; everything it
// logged before (recovery among it) precedes it on stderr.
const servingLog = "msg=serving"

// errExited says a process ended while a caller waited for its output.
var errExited = errors.New("the daemon exited")

// Options say how to run a daemon. Binary and StateDir are required.
type Options struct {
	// Binary is the wharf binary (Build, BuildBinary).
	Binary string
	// StateDir is the private state directory; Start creates it with mode
	// 0700 when missing.
	StateDir string
	// Home is the daemon's $HOME, so neither it nor its git reads the
	// user's configuration; default: a directory "home" beside StateDir,
	// created when missing.
	Home string
	// User is $USER, which names the first user; default FirstUser.
	User string
	// Args are more `wharf serve` flags, after --listen 127.0.0.1:0 and
	// --state-dir. The daemon must log at level info or debug: Start waits
	// for its "serving" line.
	Args []string
	// Env is added last to the daemon's environment: the test's own minus
	// HOME, USER and every XDG_*, GIT_* and WHARF_* variable.
	Env []string
	// Log, when set, receives every byte of the daemon's stderr and
	// stdout as it comes, across restarts (Secrets.Log, a file,
	// os.Stderr). The two are copied by two goroutines: Log must be safe
	// for concurrent writes.
	Log io.Writer
}

// Daemon is one `wharf serve` process. It is not restarted in place:
// Restart returns a new Daemon on the same options.
type Daemon struct {
	opts    Options
	cmd     *exec.Cmd
	url     string
	stderr  *output
	exited  chan struct{} // closed once the process has exited and its pipes are drained
	waitErr error         // cmd.Wait's result, set before exited is closed
}

// Start runs `wharf serve --listen 127.0.0.1:0 --state-dir <StateDir>` and
// returns once it serves: its URL is printed and its "serving" line
// logged, so its recovery has run and its log says how. ctx bounds only
// the start. The caller ends the process with Kill or Stop (a test: in a
// t.Cleanup), also when Start's caller fails later.
func Start(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Binary == "" || opts.StateDir == "" {
		return nil, errors.New("daemontest: Options.Binary and Options.StateDir are required")
	}
	if opts.User == "" {
		opts.User = FirstUser
	}
	if opts.Home == "" {
		opts.Home = filepath.Join(filepath.Dir(opts.StateDir), "home")
	}
	for _, dir := range []string{opts.StateDir, opts.Home} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("daemontest: %w", err)
		}
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", opts.StateDir}, opts.Args...)
	cmd := exec.Command(opts.Binary, args...)
	cmd.Env = append(append(scrubbedEnv(), "HOME="+opts.Home, "USER="+opts.User), opts.Env...)
	stdout := newOutput(opts.Log)
	d := &Daemon{opts: opts, cmd: cmd, stderr: newOutput(opts.Log), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = stdout, d.stderr
	// A process that leaves a descendant holding its pipes must not hold
	// Wait forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("daemontest: start %s: %w", opts.Binary, err)
	}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	line, err := stdout.waitFor(ctx, d.exited, func(s string) bool { return strings.Contains(s, "\n") })
	if err == nil {
		d.url, _, _ = strings.Cut(line, "\n")
		_, err = d.stderr.waitFor(ctx, d.exited, func(s string) bool { return strings.Contains(s, servingLog) })
	}
	if err != nil {
		d.Kill()
		return nil, fmt.Errorf("daemontest: the daemon did not start: %w (%v)\nstderr:\n%s", err, d.waitErr, d.stderr)
	}
	return d, nil
}

// Environ is the environment a daemon under test runs with: this
// process's, without what would point the daemon or its git at the
// user's own files or change its behavior (HOME, USER, XDG_*, GIT_*,
// WHARF_*), then HOME=home and USER=user.
func Environ(home, user string) []string {
	return append(scrubbedEnv(), "HOME="+home, "USER="+user)
}

// scrubbedEnv is Environ's base.
func scrubbedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "USER" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "GIT_") ||
			strings.HasPrefix(k, "WHARF_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// URL is the address the daemon printed, with its trailing slash.
func (d *Daemon) URL() string { return d.url }

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// StateDir is the daemon's state directory.
func (d *Daemon) StateDir() string { return d.opts.StateDir }

// Stderr returns what this process has written to stderr so far: the
// banner and its log.
func (d *Daemon) Stderr() string { return d.stderr.String() }

// WaitLog waits until this process's stderr holds s, the process exits, or
// ctx ends.
func (d *Daemon) WaitLog(ctx context.Context, s string) error {
	_, err := d.stderr.waitFor(ctx, d.exited, func(out string) bool { return strings.Contains(out, s) })
	return err
}

// Exited is closed once the process has exited.
func (d *Daemon) Exited() <-chan struct{} { return d.exited }

// Kill sends SIGKILL, the way the OOM killer or a power cut ends a
// process (no deferred call, no database close, no answer to requests in
// flight), and waits for the process to end. It fails when the process had
// already ended on its own, which a crash test must report.
func (d *Daemon) Kill() error {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
	if sig, ok := signalOf(d.waitErr); ok && sig == syscall.SIGKILL {
		return nil
	}
	return fmt.Errorf("daemontest: the daemon was not killed: it had exited (%v)", d.waitErr)
}

// AwaitChildren waits, for a bounded time (10 s), until no workspace
// child of the daemon's state directory runs. A killed daemon's children
// outlive it briefly and still write under the state directory, so a
// test's cleanup calls it after Kill before the directory is removed.
// Kill itself does not wait: a crash test restarts the daemon while they
// end, as after a real crash.
func (d *Daemon) AwaitChildren() { awaitChildren(d.opts.StateDir) }

// Stop asks the daemon to shut down gracefully (SIGTERM) and waits for it
// until ctx ends (then kills it); it fails unless the daemon exits 0.
func (d *Daemon) Stop(ctx context.Context) error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-ctx.Done():
		d.Kill()
		return fmt.Errorf("daemontest: the daemon did not stop: %w", context.Cause(ctx))
	}
	if d.waitErr != nil {
		return fmt.Errorf("daemontest: the daemon did not stop cleanly: %v\nstderr:\n%s", d.waitErr, d.stderr)
	}
	return nil
}

// Restart starts a new daemon with the same options, on the same state
// directory, once this one has exited (after Kill or Stop).
func (d *Daemon) Restart(ctx context.Context) (*Daemon, error) {
	select {
	case <-d.exited:
	default:
		return nil, errors.New("daemontest: Restart of a daemon that still runs")
	}
	return Start(ctx, d.opts)
}

// Command returns `wharf <args> --state-dir <the daemon's state directory>`
// with the daemon's environment, ready to run beside it (or after it):
// `wharf user passwd NAME --password-stdin`, say. The caller sets its
// standard input and outputs.
func (d *Daemon) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, d.opts.Binary, append(args, "--state-dir", d.opts.StateDir)...)
	cmd.Env = append(append(scrubbedEnv(), "HOME="+d.opts.Home, "USER="+d.opts.User), d.opts.Env...)
	return cmd
}

// FirstUserPassword reads the first user's password from the file the
// daemon wrote, after checking that its banner names that file. It fails
// when this process created no user (a restart) or the file is gone.
func (d *Daemon) FirstUserPassword() (string, error) {
	path := filepath.Join(d.opts.StateDir, FirstPasswordFile)
	banner := d.stderr.String()
	if !strings.Contains(banner, "created the first user") || !strings.Contains(banner, FirstPasswordFile) {
		return "", errors.New("daemontest: the daemon's banner names no first-user password file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("daemontest: %w", err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// signalOf returns the signal that ended a process, from exec's error.
func signalOf(err error) (syscall.Signal, bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}
