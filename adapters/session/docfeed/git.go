package docfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// gitOutputCap bounds the stdout kept of one git command. ls-files of a
// 50,000-file tree is about 3 MB; a command past the cap fails rather than
// returning a truncated listing.
const gitOutputCap = 256 << 20

// gitStderrCap bounds the stderr tail kept for the logs.
const gitStderrCap = 1 << 10

// gitWaitDelay bounds how long a finished or killed git may hold its pipes
// open (through a stray grandchild) before Wait gives up on them.
const gitWaitDelay = 2 * time.Second

// gitRunner runs git commands for the feed. Every command:
//   - runs with `-C dir` and never depends on the process's directory;
//   - gets an environment without GIT_* variables (which would redirect
//     or reconfigure git), with LC_ALL=C and prompts off;
//   - gets an empty stdin and its own process group, killed as a whole
//     when the context ends or the timeout passes;
//   - takes no optional locks (`--no-optional-locks`), so a background
//     status never makes the user's own git fail on index.lock, and never
//     writes the index, whose change would trigger another refresh;
//   - takes pathspecs literally and ignores repository settings that would
//     run programs or colour the output (core.fsmonitor, color.ui,
//     log.showSignature): a workspace folder is not necessarily trusted.
//
// Only machine formats (-z listings, porcelain v2, explicit --format
// fields) are parsed; git's human messages never are.
type gitRunner struct {
	git     string
	env     []string
	timeout time.Duration
	log     *slog.Logger
}

func newGitRunner(o Options) *gitRunner {
	env := make([]string, 0, len(o.Env)+3)
	for _, kv := range o.Env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "LC_ALL" || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0")
	return &gitRunner{git: o.Git, env: env, timeout: o.GitTimeout, log: o.Logger}
}

// gitPrefix precedes every command's own arguments.
var gitPrefix = []string{
	"--no-optional-locks", "--literal-pathspecs",
	"-c", "core.fsmonitor=false", "-c", "color.ui=false", "-c", "log.showSignature=false",
}

// run runs git in dir and returns its stdout and exit status. A non-zero
// status is not an error: callers read the statuses git documents. The
// error reports a command that did not run to completion (not found,
// cancelled, timed out, killed, output over the cap); it names the command
// and carries a bounded stderr tail, for logs only.
func (g *gitRunner) run(ctx context.Context, dir string, args ...string) ([]byte, int, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	full := make([]string, 0, len(gitPrefix)+2+len(args))
	full = append(full, "-C", dir)
	full = append(full, gitPrefix...)
	full = append(full, args...)

	stdout := &capWriter{limit: gitOutputCap}
	stderr := &capWriter{limit: gitStderrCap, tail: true}
	cmd := exec.CommandContext(ctx, g.git, full...)
	cmd.Env = g.env
	cmd.Dir = "/"
	cmd.Stdin = nil // the null device
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the group so hooks and helpers die with git.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = gitWaitDelay

	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case parent.Err() != nil:
		return nil, -1, fmt.Errorf("git %s: cancelled: %w", args[0], parent.Err())
	case ctx.Err() != nil:
		return nil, -1, fmt.Errorf("git %s: timed out after %v", args[0], g.timeout)
	case errors.As(err, &exit) && exit.Exited():
		code := exit.ExitCode()
		if code != 0 && code != 1 {
			g.log.Debug("git exited", "cmd", args[0], "code", code, "stderr", string(stderr.buf))
		}
		if stdout.over {
			return nil, code, fmt.Errorf("git %s: output over %d bytes", args[0], gitOutputCap)
		}
		return stdout.buf, code, nil
	default:
		return nil, -1, fmt.Errorf("git %s: %w (stderr: %q)", args[0], err, stderr.buf)
	}
	if stdout.over {
		return nil, 0, fmt.Errorf("git %s: output over %d bytes", args[0], gitOutputCap)
	}
	return stdout.buf, 0, nil
}

// runOK is run for commands whose only success is exit status 0.
func (g *gitRunner) runOK(ctx context.Context, dir string, args ...string) ([]byte, error) {
	out, code, err := g.run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("git %s: exit status %d", args[0], code)
	}
	return out, nil
}

// capWriter keeps at most limit bytes: the head, or with tail the last
// ones. It never fails a write, so git never blocks on a full pipe.
type capWriter struct {
	buf   []byte
	limit int
	tail  bool
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) <= w.limit {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.over = true
	if !w.tail {
		w.buf = append(w.buf, p[:w.limit-len(w.buf)]...)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.limit:]...)
	return len(p), nil
}

// splitNUL splits NUL-terminated records, dropping the final terminator.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\x00")
	return strings.Split(s, "\x00")
}
