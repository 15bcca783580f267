package gitcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
	// arguments, after -C: only those globalArgs lists (such as
	// --no-optional-locks), which choose no repository nor setting. New
	// panics on another.
	Args []string
	// Config is Wharf's own configuration, given to every command as
	// command-line settings (GIT_CONFIG_COUNT): it overrides the user's
	// and the system's config, and the repository never sets these keys
	// (nor any that names a program). New panics on a key that is not
	// "section.name" or "section.sub.name", or a NUL in a value. This is
	// where Wharf sets its own core.sshCommand, credential helper or
	// signing program.
	Config []Setting
	// ShadowDir is a private directory (made 0700 when missing) where
	// RunIn keeps its shadow directories (see shadows). The Runner owns
	// the entries named wharf-git-* in it: those an earlier process left
	// when it crashed are removed at the first RunIn. "" (what Wharf
	// uses): a new private directory in os.TempDir() per Runner, so the
	// state directory holds no links into repositories; a shadow's config
	// holds no credential (remote URLs lose their user information).
	ShadowDir string
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

// Setting is one configuration key and its value.
type Setting struct{ Key, Value string }

// Runner runs git commands as its Options say. It is safe for concurrent
// use.
type Runner struct {
	opts    Options
	base    []string // Env's
	env     []string // base, then Config and fixedConfig as GIT_CONFIG_*
	shadows shadows
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
	for _, a := range opts.Args {
		if !globalArgs[a] {
			panic(fmt.Sprintf("gitcmd: global option %q is not one gitcmd allows", a))
		}
	}
	opts.Args = slices.Clone(opts.Args)
	base := Env(opts.Env, opts.IsolateConfig)
	env, err := withSettings(base, opts.Config, fixedConfig)
	if err != nil {
		panic("gitcmd: " + err.Error())
	}
	return &Runner{opts: opts, base: base, env: env, shadows: shadows{parent: opts.ShadowDir}}
}

// withSettings returns env followed by the settings of each list, in
// order, as command-line config (GIT_CONFIG_COUNT and its pairs), which
// git reads after every config file. A malformed setting is an error.
func withSettings(env []string, lists ...[]Setting) ([]string, error) {
	settings := slices.Concat(lists...)
	out := make([]string, 0, len(env)+1+2*len(settings))
	out = append(append(out, env...), fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(settings)))
	for i, c := range settings {
		if err := checkSetting(c); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, c.Key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, c.Value))
	}
	return out, nil
}

// Close removes the shadow directories RunIn made (see shadows), once the
// Runner's commands have ended; a command running meanwhile fails. The
// Runner stays usable. A Runner never closed leaves them in ShadowDir
// when the process ends (a few links and a config per repository, private
// to the user), for the next Runner there to remove.
func (r *Runner) Close() error { return r.shadows.close() }

// checkSetting refuses a key git would not take as a full name, and a
// value no environment variable can hold.
func checkSetting(c Setting) error {
	first, last := strings.IndexByte(c.Key, '.'), strings.LastIndexByte(c.Key, '.')
	if first <= 0 || last == len(c.Key)-1 || strings.ContainsAny(c.Key, "\n\x00=") {
		return fmt.Errorf("config key %q", c.Key)
	}
	if strings.IndexByte(c.Value, 0) >= 0 {
		return fmt.Errorf("config value of %q holds a NUL", c.Key)
	}
	return nil
}

// Result is how a command that ran to completion ended.
type Result struct {
	Stdout []byte // all of it: at most Options.MaxStdout bytes
	Code   int    // the exit status
	Stderr []byte // its last Options.StderrTail bytes, for logs only
}

// Repo is a work tree and its git directories, as Discover found them.
type Repo struct {
	Top       string // the work tree's top level
	GitDir    string // its own git directory (HEAD, index)
	CommonDir string // the directory it shares with other work trees (config, refs, objects)
}

// Discover asks git which work tree holds dir (`rev-parse` of the top
// level, the git directory and the common directory; a command that runs
// nothing any setting names, see doc.go). When git's exit status is not 0
// the Repo is zero and the caller reads the Result: dir is in no work tree,
// or git found a repository it would not use (a bare one, an unsafe owner).
// An answer that is not three absolute paths (one holding a newline) is
// an *Error wrapping ErrUnexpectedOutput; the other errors are Run's.
func (r *Runner) Discover(ctx context.Context, dir string) (Repo, Result, error) {
	args := []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"}
	res, err := r.run(ctx, dir, args, nil)
	if err != nil || res.Code != 0 {
		return Repo{}, res, err
	}
	lines := strings.Split(strings.TrimSuffix(string(res.Stdout), "\n"), "\n")
	if len(lines) != 3 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) || !filepath.IsAbs(lines[2]) {
		return Repo{}, res, &Error{Dir: dir, Args: args, Code: res.Code, Stderr: res.Stderr,
			Err: fmt.Errorf("%w: %q", ErrUnexpectedOutput, res.Stdout)}
	}
	return Repo{Top: filepath.Clean(lines[0]), GitDir: filepath.Clean(lines[1]), CommonDir: filepath.Clean(lines[2])}, res, nil
}

// Run runs a command that needs no repository, or makes one (`init`,
// `version`: outsideCommands), in dir (passed as -C dir; "" passes none).
// Any other command is refused with ErrRefused: a command that reads a
// repository runs through RunIn. It runs bounded as the package doc
// says, and reports as RunIn does.
func (r *Runner) Run(ctx context.Context, dir string, args ...string) (Result, error) {
	if err := checkArgs(args); err != nil {
		return Result{}, &Error{Dir: dir, Args: args, Code: -1, Err: err}
	}
	if !outsideCommands[args[0]] {
		return Result{}, &Error{Dir: dir, Args: args, Code: -1,
			Err: fmt.Errorf("%w: %s reads a repository: it runs through RunIn", ErrRefused, args[0])}
	}
	return r.run(ctx, dir, args, nil)
}

// RunIn runs git with args in the repository repo, in dir (a directory of
// its work tree; "" is the top level), so that no setting of the
// repository's own config names a program git runs. git gets the
// repository explicitly (GIT_DIR, GIT_WORK_TREE) and, as its common
// directory (GIT_COMMON_DIR), a shadow: links to the real one's entries
// but its config and its hooks, and a config of the repository's settings
// that keptKeys allows, read by RunIn before git starts. Whatever the
// repository's config says meanwhile, git reads only the shadow's. status
// and diff also get submoduleGuard; an option that would enter submodules
// is refused (ErrRefused).
//
// A non-zero exit status is not an error: callers read the statuses git
// documents. The error, an *Error, reports a command that did not run to
// completion: it was refused, its repository's config could not be used
// (ErrBadConfig), it could not start, ctx ended (wrapping ctx's error),
// the timeout passed (ErrTimeout), a signal ended it, its pipes stayed
// open past WaitDelay, or its stdout overflowed (ErrOutputTooLarge).
func (r *Runner) RunIn(ctx context.Context, repo Repo, dir string, args ...string) (Result, error) {
	return r.RunInWith(ctx, repo, dir, With{}, args...)
}

// RunInWith is RunIn with the bounds and the credentials of w instead of
// the Runner's (see With).
func (r *Runner) RunInWith(ctx context.Context, repo Repo, dir string, w With, args ...string) (Result, error) {
	if dir == "" {
		dir = repo.Top
	}
	fail := func(err error) (Result, error) { return Result{}, &Error{Dir: dir, Args: args, Code: -1, Err: err} }
	if err := checkArgs(args); err != nil {
		return fail(err)
	}
	if !filepath.IsAbs(repo.Top) || !filepath.IsAbs(repo.GitDir) || !filepath.IsAbs(repo.CommonDir) {
		return fail(fmt.Errorf("%w: a repository needs absolute paths", ErrRefused))
	}
	lim, err := r.limits(w)
	if err != nil {
		return fail(err)
	}
	shadow, release, err := r.shadows.acquire(repo)
	if err != nil {
		return fail(err)
	}
	defer release()
	return r.runLimited(ctx, dir, withGuard(args), []string{
		"GIT_DIR=" + repo.GitDir, "GIT_WORK_TREE=" + repo.Top, "GIT_COMMON_DIR=" + shadow,
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(repo.CommonDir, "objects"),
	}, lim)
}

// limits bound one command: its timeout, the stdout kept and its whole
// environment but the variables naming its repository.
type limits struct {
	timeout   time.Duration
	maxStdout int
	env       []string
}

// run runs git with args in dir, its environment r.env and extra, and
// waits for it, bounded as the package doc says.
func (r *Runner) run(ctx context.Context, dir string, args, extra []string) (Result, error) {
	return r.runLimited(ctx, dir, args, extra, limits{r.opts.Timeout, r.opts.MaxStdout, r.env})
}

// runLimited is run within lim.
func (r *Runner) runLimited(ctx context.Context, dir string, args, extra []string, lim limits) (Result, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()
	full := make([]string, 0, 2+len(r.opts.Args)+len(args))
	if dir != "" {
		full = append(full, "-C", dir)
	}
	full = append(append(full, r.opts.Args...), args...)

	stdout := &capBuffer{max: lim.maxStdout}
	stderr := &capBuffer{max: r.opts.StderrTail, keepTail: true}
	cmd := exec.CommandContext(ctx, r.opts.Git, full...)
	cmd.Env = append(slices.Clip(lim.env), extra...)
	cmd.Dir = "/"
	cmd.Stdin = nil // the null device
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = r.opts.WaitDelay

	err := cmd.Run()
	if ctx.Err() != nil && cmd.Process != nil {
		// Killed: the leader is reaped, but what it left in its group
		// may still be dying. Return once it is gone, so "killed with
		// everything it started" holds when the caller hears of it.
		awaitGroupGone(cmd.Process.Pid, goneWithin)
	}
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
		return fail(-1, fmt.Errorf("%w after %v: %w", ErrTimeout, lim.timeout, ctx.Err()))
	case errors.As(err, &exit) && exit.Exited():
		code = exit.ExitCode()
	default: // did not start, killed by a signal, or pipes held open
		return fail(-1, err)
	}
	if stdout.Truncated() {
		return fail(code, fmt.Errorf("%w: over %d bytes", ErrOutputTooLarge, lim.maxStdout))
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
