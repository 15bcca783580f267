// Package gitcmd runs the git binary for the adapters that need it: the
// Hub's GitRunner (adapters/gitexec) and the workspace child's document
// feed (adapters/session/docfeed). It is the one implementation of how a
// git process is run; callers say which command and read its answer. It
// holds no domain types.
//
// Every command Runner.Run starts:
//   - runs as `git [-C dir] [Options.Args...] args...` with its working
//     directory "/", so it never depends on the process's own;
//   - gets the environment Env builds from Options.Env: no GIT_* variable,
//     the C locale, no terminal prompt and, with Options.IsolateConfig,
//     none of the user's global or the system's git config;
//   - gets an empty stdin (the null device) and its own process group,
//     killed as a whole (SIGKILL) when ctx ends or Options.Timeout passes,
//     so hooks, helpers and a wedged pager die with git;
//   - may hold its output pipes open (through a stray grandchild) at most
//     Options.WaitDelay after git exited or was killed;
//   - keeps at most Options.MaxStdout bytes of stdout, and fails past
//     them rather than answer with a truncated listing, and the last
//     Options.StderrTail bytes of stderr, for logs only: decisions come from
//     exit statuses and machine formats (-z, porcelain, --format), never
//     from git's messages.
package gitcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	DefaultTimeout    = 5 * time.Second
	DefaultMaxStdout  = 64 << 10
	DefaultStderrTail = 1 << 10
	DefaultWaitDelay  = 2 * time.Second
)

// Options configure a Runner. The zero value of each field picks its
// default.
type Options struct {
	// Git is the git binary: a path, or a name looked up in the process's
	// PATH (not Env's) when a command runs. Default "git".
	Git string
	// Env is the base environment of every command, filtered by Env.
	// Default: os.Environ() as of New.
	Env []string
	// IsolateConfig keeps the user's global and the system's git config
	// away from every command (GIT_CONFIG_NOSYSTEM=1,
	// GIT_CONFIG_GLOBAL=/dev/null): for commands whose behaviour must not
	// depend on settings such as url.*.insteadOf, credential helpers,
	// proxies or extra headers. Off, the user's own config applies.
	IsolateConfig bool
	// Args are global options placed before every command's own
	// arguments, after -C (e.g. --no-optional-locks, -c key=value).
	Args []string
	// Timeout bounds each command. Default DefaultTimeout.
	Timeout time.Duration
	// MaxStdout bounds the stdout kept of one command; a command that
	// writes more fails. Default DefaultMaxStdout.
	MaxStdout int
	// StderrTail is how much of the end of stderr is kept, for logs.
	// Default DefaultStderrTail.
	StderrTail int
	// WaitDelay bounds how long a finished or killed git may hold its
	// output pipes open before the wait gives up on them. Default
	// DefaultWaitDelay.
	WaitDelay time.Duration
}

// Runner runs git commands as its Options say. It is safe for concurrent
// use.
type Runner struct {
	opts Options
	env  []string
}

// New returns a Runner configured by opts, with defaults filled in.
func New(opts Options) *Runner {
	if opts.Git == "" {
		opts.Git = "git"
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxStdout <= 0 {
		opts.MaxStdout = DefaultMaxStdout
	}
	if opts.StderrTail <= 0 {
		opts.StderrTail = DefaultStderrTail
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = DefaultWaitDelay
	}
	opts.Args = slices.Clone(opts.Args)
	return &Runner{opts: opts, env: Env(opts.Env, opts.IsolateConfig)}
}

// Result is how a command that ran to completion ended.
type Result struct {
	Stdout []byte // all of it: at most Options.MaxStdout bytes
	Code   int    // the exit status
	Stderr []byte // its last Options.StderrTail bytes, for logs only
}

// Run runs git with args in dir (passed as -C dir; "" passes none) and
// waits for it. A non-zero exit status is not an error: callers read the
// statuses git documents. The error, an *Error, reports a command that did
// not run to completion: it could not start, ctx ended (wrapping ctx's
// error), the timeout passed (ErrTimeout), a signal ended it, its pipes
// stayed open past WaitDelay, or its stdout overflowed (ErrOutputTooLarge).
func (r *Runner) Run(ctx context.Context, dir string, args ...string) (Result, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	full := make([]string, 0, 2+len(r.opts.Args)+len(args))
	if dir != "" {
		full = append(full, "-C", dir)
	}
	full = append(append(full, r.opts.Args...), args...)

	stdout := &capBuffer{max: r.opts.MaxStdout}
	stderr := &capBuffer{max: r.opts.StderrTail, keepTail: true}
	cmd := exec.CommandContext(ctx, r.opts.Git, full...)
	cmd.Env = r.env
	cmd.Dir = "/"
	cmd.Stdin = nil // the null device
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = r.opts.WaitDelay

	err := cmd.Run()
	fail := func(code int, why error) (Result, error) {
		return Result{}, &Error{Dir: dir, Args: args, Code: code, Stderr: stderr.Bytes(), Err: why}
	}
	code := 0
	var exit *exec.ExitError
	switch {
	case err == nil:
	case parent.Err() != nil:
		return fail(-1, fmt.Errorf("cancelled: %w", parent.Err()))
	case ctx.Err() != nil:
		return fail(-1, fmt.Errorf("%w after %v: %w", ErrTimeout, r.opts.Timeout, ctx.Err()))
	case errors.As(err, &exit) && exit.Exited():
		code = exit.ExitCode()
	default: // did not start, killed by a signal, or pipes held open
		return fail(-1, err)
	}
	if stdout.Truncated() {
		return fail(code, fmt.Errorf("%w: over %d bytes", ErrOutputTooLarge, r.opts.MaxStdout))
	}
	return Result{Stdout: stdout.Bytes(), Code: code, Stderr: stderr.Bytes()}, nil
}

// killGroup kills the whole process group led by pid. A group already gone
// is reported as os.ErrProcessDone, which exec treats as a normal exit.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
