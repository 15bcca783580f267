package gitcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"golang.org/x/sys/unix"
)

// A clone in a terminal: `git clone` is the one command gitcmd runs with
// a pseudo-terminal, because its owner follows its progress and answers
// its prompts (a user name, an SSH host key) as in a terminal of their
// own. It runs unbounded in time (a clone of a large repository takes
// as long as it takes; the caller kills it), with the rules of every
// command plus those of a clone:
//
//   - the system's and the user's git config are never read, nor HOME
//     (git and libcurl read $HOME/.netrc), NETRC, XDG_CONFIG_HOME, an
//     ambient SSH agent or askpass program: git gets Clone.Home, an empty
//     private folder, and only the credentials the caller projects
//     (Clone.Env, Clone.Config), after core.askPass and
//     credential.helper are reset;
//   - prompts go to the terminal (GIT_TERMINAL_PROMPT=1), where ssh's go
//     too: git and ssh open /dev/tty, which is the terminal, since git
//     leads a new session whose controlling terminal it is;
//   - git leads its own process group (the session's), which ends
//     whole: once git exits, whatever it left in its group is killed.

// Bounds of a clone's terminal.
const (
	// DefaultKillGrace is how long Kill waits after SIGTERM before
	// SIGKILL.
	DefaultKillGrace = 3 * time.Second
	// drainDelay bounds how long the terminal's output is waited for
	// after git exited: a process that left git's group could hold the
	// terminal open.
	drainDelay = 5 * time.Second
	// goneWithin bounds the wait for a killed group's processes to die.
	goneWithin = 5 * time.Second
	// terminalRows and terminalCols are the terminal's size.
	terminalRows, terminalCols = 24, 80
)

// Clone says what `git clone` clones where, and what it is lent.
type Clone struct {
	// Dir is the existing absolute folder git runs in: Target's parent.
	Dir string
	// URL is the source; one starting with "-" is refused, and the ext::
	// transport is off (fixedConfig).
	URL string
	// Target is the absolute folder git clones into: missing, or empty
	// (the caller may make it, to know it is the folder it made).
	Target string
	// Home is git's HOME: an existing, empty, private folder.
	Home string
	// Env holds the variables of the credentials lent (the projection's:
	// GIT_SSH_COMMAND, SSH_AUTH_SOCK, ...); of GIT_* variables, only
	// cloneVars may be set here, and never HOME.
	Env []string
	// Config holds the settings of the credentials lent (the
	// projection's credential helper): they follow cloneConfig and
	// Options.Config, and precede fixedConfig.
	Config []Setting
	// KillGrace is Kill's grace; zero means DefaultKillGrace.
	KillGrace time.Duration
}

// cloneVars are the GIT_* variables Clone.Env may set.
var cloneVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true, "GIT_CONFIG_NOSYSTEM": true, "GIT_CONFIG_GLOBAL": true,
}

// cloneBase are the variables of Options.Env a clone inherits: nothing
// that points at a credential, a config or a program.
var cloneBase = map[string]bool{"PATH": true, "USER": true, "LOGNAME": true, "TZ": true, "TMPDIR": true}

// cloneConfig comes first in a clone's settings: no askpass program, no
// credential helper but those the caller's settings add after it (an
// empty helper resets the list git has read so far), and no hook (a
// template directory could hold one).
var cloneConfig = []Setting{
	{"core.askPass", ""},
	{"credential.helper", ""},
	{"core.hooksPath", os.DevNull},
}

// Terminal is a git command running in a pseudo-terminal of its own.
// Read, Write, Wait and Kill are safe for concurrent use.
type Terminal struct {
	cmd   *exec.Cmd
	pty   *os.File
	grace time.Duration

	exited   chan struct{} // closed once git was reaped and its group killed
	waitErr  error
	drained  chan struct{} // closed once Read reached the end of the output
	drainOne sync.Once
	closeOne sync.Once
	killMu   sync.Mutex // one Kill at a time
}

// StartClone starts `git -C c.Dir clone --progress -- c.URL c.Target` in
// a new pseudo-terminal, as the comment above says. ctx bounds the start
// only. A failure to start is an *Error and leaves nothing running.
func (r *Runner) StartClone(ctx context.Context, c Clone) (*Terminal, error) {
	args := []string{"clone", "--progress", "--", c.URL, c.Target}
	fail := func(err error) (*Terminal, error) { return nil, &Error{Dir: c.Dir, Args: args, Code: -1, Err: err} }
	if err := checkClone(c); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("cancelled: %w", err))
	}
	env, err := r.cloneEnv(c)
	if err != nil {
		return fail(err)
	}
	full := append(append([]string{"-C", c.Dir}, r.opts.Args...), args...)
	cmd := exec.Command(r.opts.Git, full...)
	cmd.Env = env
	cmd.Dir = "/"
	master, tty, err := pty.Open()
	if err != nil {
		return fail(fmt.Errorf("no terminal: %w", err))
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: terminalRows, Cols: terminalCols}); err != nil {
		master.Close()
		tty.Close()
		return fail(fmt.Errorf("terminal size: %w", err))
	}
	if master, err = pollable(master); err != nil {
		tty.Close()
		return fail(fmt.Errorf("terminal: %w", err))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A new session (and so process group) whose controlling terminal is
	// the child's stdin.
	cmd.SysProcAttr = sessionAttr()
	err = cmd.Start()
	tty.Close() // git holds its own copies
	if err != nil {
		master.Close()
		return fail(err)
	}
	grace := c.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	t := &Terminal{cmd: cmd, pty: master, grace: grace, exited: make(chan struct{}), drained: make(chan struct{})}
	go t.reap()
	return t, nil
}

// checkClone refuses a clone gitcmd cannot vouch for.
func checkClone(c Clone) error {
	switch {
	case !filepath.IsAbs(c.Dir) || !filepath.IsAbs(c.Target) || !filepath.IsAbs(c.Home):
		return fmt.Errorf("%w: a clone needs absolute folders", ErrRefused)
	case c.URL == "" || strings.HasPrefix(c.URL, "-") || strings.ContainsAny(c.URL, "\x00\n\r"):
		return fmt.Errorf("%w: a clone's URL must not be empty, option-like or span lines", ErrRefused)
	}
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "HOME" || strings.HasPrefix(k, "GIT_") && !cloneVars[k] || strings.IndexByte(kv, 0) >= 0 {
			return fmt.Errorf("%w: a clone's variables may not set %s", ErrRefused, k)
		}
	}
	return nil
}

// cloneEnv is a clone's environment: lentEnv with prompts on.
func (r *Runner) cloneEnv(c Clone) ([]string, error) {
	return r.lentEnv(c.Home, c.Env, c.Config, true)
}

// lentEnv is the environment of a command lent credentials (a clone, a
// fetch): cloneBase of Options.Env, the C locale, a dumb terminal,
// prompts on or off, no system or global config, home as HOME,
// cloneConfig, Options.Config, config and fixedConfig as GIT_CONFIG_*,
// then vars.
func (r *Runner) lentEnv(home string, vars []string, config []Setting, prompt bool) ([]string, error) {
	var env []string
	for _, kv := range r.opts.Env {
		if k, _, _ := strings.Cut(kv, "="); cloneBase[k] {
			env = append(env, kv)
		}
	}
	prompts := "GIT_TERMINAL_PROMPT=0"
	if prompt {
		prompts = "GIT_TERMINAL_PROMPT=1"
	}
	env = append(env, "LC_ALL=C", "LANG=C", "TERM=dumb", prompts,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+home)
	env, err := withSettings(env, cloneConfig, r.opts.Config, config, fixedConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return append(env, vars...), nil
}

// Pid is git's process id, which is its process group's too.
func (t *Terminal) Pid() int { return t.cmd.Process.Pid }

// reap is the one goroutine that waits for git. Once git has exited, and
// before its pid (the group's id) can be reused, it kills what git left
// in its group; then it reaps git, waits (bounded) for the group to be
// gone, and closes the terminal once its output was read, or drainDelay
// later (a process that left the group may hold it open).
func (t *Terminal) reap() {
	pid := t.cmd.Process.Pid
	unreaped := awaitExit(pid)
	if unreaped {
		_ = killGroup(pid)
	}
	err := t.cmd.Wait()
	if !unreaped {
		_ = killGroup(pid)
	}
	awaitGroupGone(pid, goneWithin)
	t.waitErr = exitError(t.cmd, err)
	close(t.exited)
	select {
	case <-t.drained:
	case <-time.After(drainDelay):
	}
	t.closePTY()
}

// pollable returns the terminal's master as a file Go's poller watches,
// and closes f. pty.Open leaves it in blocking mode (its Fd call sets
// that), where Close cannot interrupt a Read waiting in the kernel: a
// process that left git's group and opened the terminal again would keep
// Read, and so the clone's output, open for ever. On a non-blocking
// descriptor Go's poller waits instead, and Close ends a waiting Read.
func pollable(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

func (t *Terminal) closePTY() { t.closeOne.Do(func() { t.pty.Close() }) }

// Read reads the terminal's output. It returns io.EOF once git has
// exited and its output was read (Linux reports the end of a terminal
// whose other side is closed as EIO), or once the terminal was closed.
func (t *Terminal) Read(p []byte) (int, error) {
	n, err := t.pty.Read(p)
	if err != nil && (errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF)) {
		t.drainOne.Do(func() { close(t.drained) })
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

// Write types p into the terminal. Once git has ended it fails.
func (t *Terminal) Write(p []byte) (int, error) {
	select {
	case <-t.exited:
		return 0, errors.New("the command has ended")
	default:
	}
	n, err := t.pty.Write(p)
	if err != nil {
		return n, errors.New("the command's terminal is closed")
	}
	return n, nil
}

// Wait waits until git has exited and its group is gone, and returns
// how git ended: nil for exit status 0, else an *Error whose Code is the
// exit status, or -1 with Err naming the signal that ended git.
func (t *Terminal) Wait() error {
	<-t.exited
	return t.waitErr
}

// Exited is closed once git has exited and its group is gone.
func (t *Terminal) Exited() <-chan struct{} { return t.exited }

// Kill ends git's whole process group: SIGTERM, then SIGKILL once the
// grace has passed, and returns once git was reaped and its group is
// gone (bounded: an error says a group member outlived the bound). The
// terminal is closed, so Read ends. Killing an ended command only closes
// the terminal.
func (t *Terminal) Kill() error {
	t.killMu.Lock()
	defer t.killMu.Unlock()
	defer t.closePTY()
	select {
	case <-t.exited:
		return nil
	default:
	}
	// git has not been reaped (exited is closed after), so its pid and
	// group id are not reused yet.
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGTERM)
	grace := time.NewTimer(t.grace)
	defer grace.Stop()
	select {
	case <-t.exited:
		return nil
	case <-grace.C:
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	bound := time.NewTimer(goneWithin + time.Second)
	defer bound.Stop()
	select {
	case <-t.exited:
		return nil
	case <-bound.C:
		return errors.New("git did not end after SIGKILL")
	}
}

// awaitGroupGone waits, at most within, until no process of group pgid
// is left but zombies (which run nothing; their parent reaps them).
func awaitGroupGone(pgid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for procgroup.Running(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// exitError is Wait's answer for cmd, which Wait answered with err.
func exitError(cmd *exec.Cmd, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Dir: cmd.Args[2], Args: cmd.Args[3:], Code: -1, Err: err}
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Err = fmt.Errorf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		} else if st.Exited() {
			e.Code, e.Err = st.ExitCode(), nil
		}
	}
	return e
}
