package gitexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// outputCap bounds what is kept of each of a command's stdout and
	// stderr. Output beyond it is drained and dropped, so a chatty git never
	// blocks on a full pipe; an overflowing stdout makes the answer unusable.
	outputCap = 64 << 10
	// causeTail bounds the stderr tail kept in an error cause for the logs.
	causeTail = 1 << 10
	// waitDelay bounds how long Wait waits for the output pipes to close
	// after git exited or was killed: a process that escaped the group could
	// otherwise hold them open forever.
	waitDelay = 2 * time.Second
)

// result is how one git command that ran to completion ended.
type result struct {
	stdout []byte
	stderr []byte // the last outputCap bytes
	code   int    // exit status
}

// run runs git with args and waits for it, bounded by the Runner's timeout.
// The command gets an empty stdin, its own process group (killed as a whole
// when ctx ends or the timeout passes) and the sanitized environment.
//
// A non-zero exit status is not an error here: callers decide from the
// statuses git documents. run fails when git did not run to completion: it
// could not start, it timed out or ctx ended, a signal ended it, or its
// stdout overflowed outputCap.
func (r *Runner) run(ctx context.Context, args ...string) (result, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	stdout := &capBuffer{max: outputCap}
	stderr := &capBuffer{max: outputCap, keepTail: true}
	r.runs.Add(1)
	cmd := exec.CommandContext(ctx, r.git, args...)
	cmd.Env = r.env
	cmd.Dir = "/" // every path is passed with -C; never depend on our cwd
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay

	start := time.Now()
	err := cmd.Run()
	res := result{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case parent.Err() != nil:
		return result{}, r.fail(args, stderr, fmt.Errorf("cancelled: %w", parent.Err()))
	case ctx.Err() != nil:
		r.log.Warn("git timed out; its process group was killed",
			"args", args, "timeout", r.timeout)
		return result{}, r.fail(args, stderr, fmt.Errorf("timed out after %v: %w", r.timeout, ctx.Err()))
	case errors.As(err, &exit) && exit.Exited():
		res.code = exit.ExitCode()
	default: // did not start, killed by a signal, or pipes held open
		return result{}, r.fail(args, stderr, err)
	}
	r.log.Debug("git", "args", args, "exit", res.code, "duration", time.Since(start))
	if stdout.Truncated() {
		return result{}, r.fail(args, stderr, fmt.Errorf("stdout over %d bytes", outputCap))
	}
	return res, nil
}

// fail builds the private cause of a command that did not run to
// completion.
func (r *Runner) fail(args []string, stderr *capBuffer, err error) error {
	return &commandError{args: args, code: -1, stderr: stderr.Bytes(), err: err}
}

// killGroup kills the whole process group led by pid, so grandchildren
// (hooks, helpers, a wedged pager) die with git. A group already gone is
// reported as os.ErrProcessDone, which exec treats as a normal exit.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// commandEnv returns base without any GIT_* variable (GIT_DIR, GIT_WORK_TREE,
// GIT_CONFIG_* and friends would redirect or reconfigure git behind the
// Hub's back) and with the locale pinned to C, so git's behaviour does not
// depend on the host's language, and terminal prompts disabled, so git fails
// rather than waits for a user who is not there. HOME and XDG_CONFIG_HOME
// pass through: the user's own git config is respected.
func commandEnv(base []string) []string {
	env := make([]string, 0, len(base)+3)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "LC_ALL" || k == "LANG" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0")
}

// commandError is the private cause of a failed git command, for logs only:
// what ran, how it ended and a bounded tail of its stderr. It never becomes a
// public message.
type commandError struct {
	args   []string
	code   int // exit status, -1 when git did not exit on its own
	stderr []byte
	err    error // why git did not run to completion, if so
}

func (e *commandError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "git %s", strings.Join(e.args, " "))
	if e.err != nil {
		fmt.Fprintf(&b, ": %v", e.err)
	} else {
		fmt.Fprintf(&b, ": exit status %d", e.code)
	}
	if tail := e.stderr; len(tail) > 0 {
		if len(tail) > causeTail {
			tail = tail[len(tail)-causeTail:]
		}
		fmt.Fprintf(&b, "; stderr tail: %q", strings.ToValidUTF8(string(tail), "\uFFFD"))
	}
	return b.String()
}

func (e *commandError) Unwrap() error { return e.err }

// capBuffer is an io.Writer that keeps at most max bytes: the first ones,
// or the last ones when keepTail is set. Writes always succeed, so the
// copying goroutine keeps draining the pipe.
type capBuffer struct {
	max      int
	keepTail bool
	buf      []byte
	total    int64
}

// Write keeps what fits and reports every byte as written.
func (b *capBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if !b.keepTail {
		if room := b.max - len(b.buf); room > 0 {
			b.buf = append(b.buf, p[:min(room, len(p))]...)
		}
		return len(p), nil
	}
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max { // compact now and then, not on every write
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// Bytes returns the kept bytes.
func (b *capBuffer) Bytes() []byte {
	if len(b.buf) > b.max {
		return b.buf[len(b.buf)-b.max:]
	}
	return b.buf
}

// Truncated reports whether bytes were dropped.
func (b *capBuffer) Truncated() bool { return b.total > int64(len(b.Bytes())) }
