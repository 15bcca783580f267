// Package gitexec implements hub.GitRunner by running the git binary;
// a clone runs in a pseudo-terminal with the credentials it is lent
// (clone.go), and a repository's worktrees are listed, made, inspected
// and removed as worktree.go's memo says.
//
// Every command runs bounded, through adapters/internal/gitcmd: a timeout,
// its own process group killed as a whole, capped output, an empty stdin
// and an environment without GIT_* variables and with the C locale; the
// user's own git config applies, and no setting of the folder's own
// config that names a program is ever read (see gitcmd). Decisions are
// taken from exit statuses git documents and from the file system, never
// from git's messages.
package gitexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

var _ hub.GitRunner = (*Runner)(nil)

// DefaultTimeout bounds each git command when Options.Timeout is zero:
// gitcmd's, the one the workspace child's git runs under too.
const DefaultTimeout = gitcmd.DefaultTimeout

// Options configures a Runner. The zero value is usable.
type Options struct {
	// Git is the git binary: a path, or a name looked up in the process's
	// PATH (not Env's) when a command runs. "" means "git".
	Git string
	// Timeout bounds each command; zero means DefaultTimeout.
	Timeout time.Duration
	// Env is the base environment of every command; nil means os.Environ()
	// as of New. GIT_* variables are always removed from it and the locale
	// is pinned to C (see gitcmd.Env).
	Env []string
	// Logger receives debug lines per command and a warning per timeout;
	// nil means slog.Default().
	Logger *slog.Logger
	// MaxAge bounds how long an inspection whose files are unchanged is
	// reused (see memo.go); zero means DefaultMaxAge, negative never
	// reuses one.
	MaxAge time.Duration
	// RuntimeDir is the private folder (made 0700; refused when open to
	// others) where each clone's or fetch's credential folder is made
	// while it runs (clone.go, worktree_fetch.go). "" means a new
	// private temporary folder, made at the first of them and removed by
	// Close.
	RuntimeDir string
	// Command runs Wharf itself: a clone's git runs it as its credential
	// helper (`wharf git-credential`). nil means the running executable.
	Command []string
	// CloneCAFile, when set, is the file of certificate authorities a
	// clone or a worktree family's fetch over HTTPS trusts instead of
	// the system's (git's http.sslCAInfo): neither reads the system's
	// nor the user's git config, where such a setting would otherwise
	// be.
	CloneCAFile string
	// CloneKnownHosts, when set, is the known_hosts file a clone's or
	// a fetch's ssh looks host keys up in, and records the one a person
	// confirms through a clone's terminal in; "" means the account's own
	// ~/.ssh/known_hosts, which the user's ssh and sessions share.
	CloneKnownHosts string
	// CloneKillGrace is how long a clone's Kill waits after SIGTERM
	// before SIGKILL; zero means 3 seconds (gitcmd.DefaultKillGrace).
	CloneKillGrace time.Duration
}

// Runner is a hub.GitRunner over os/exec. It is safe for concurrent use.
type Runner struct {
	cmd     *gitcmd.Runner
	timeout time.Duration
	log     *slog.Logger
	maxAge  time.Duration
	memo    memo
	runs    atomic.Int64 // git processes started, for tests

	// Clones (clone.go).
	env       []string
	command   []string
	caFile    string
	known     string // CloneKnownHosts
	killGrace time.Duration
	rtOnce    sync.Once
	rtDir     string // the runtime folder, once made
	rtErr     error
	rtTemp    bool // made by the Runner: Close removes it
}

// New returns a Runner configured by opts, with defaults filled in.
func New(opts Options) *Runner {
	r := &Runner{timeout: opts.Timeout, log: opts.Logger, maxAge: opts.MaxAge, env: opts.Env, command: opts.Command,
		caFile: opts.CloneCAFile, known: opts.CloneKnownHosts, killGrace: opts.CloneKillGrace, rtDir: opts.RuntimeDir}
	if r.env == nil {
		r.env = os.Environ()
	}
	if r.command == nil {
		if self, err := os.Executable(); err == nil {
			r.command = []string{self}
		} else {
			r.command = []string{"wharf"}
		}
	}
	if r.maxAge == 0 {
		r.maxAge = DefaultMaxAge
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	// --no-optional-locks: an inspection never takes the index's lock
	// (InspectTree would otherwise find its own status's index.lock).
	r.cmd = gitcmd.New(gitcmd.Options{Git: opts.Git, Env: r.env, Timeout: r.timeout, Args: []string{"--no-optional-locks"}})
	if r.log == nil {
		r.log = slog.Default()
	}
	return r
}

// Close removes the directories gitcmd keeps for the repositories the
// Runner ran in (see gitcmd.Runner.Close), once its calls have returned,
// and the temporary runtime folder it made for clones once none runs.
// The Runner stays usable for inspections.
func (r *Runner) Close() error {
	if r.rtTemp {
		_ = os.Remove(r.rtDir) // fails while a clone runs, whose folder is there
	}
	return r.cmd.Close()
}

// Inspect describes the checkout containing dir, per hub.GitRunner.
//
// git rev-parse answers for a checkout. When it fails, whether dir is in no
// repository is decided without reading git's message: if no ancestor of
// dir (dir included) holds a .git entry or looks like a bare repository,
// git had nothing to find and the answer is "no repository"; otherwise git
// found something it could not use (an unsafe owner, a broken repository, a
// bare repository) and the answer is an error.
//
// An inspection is reused while the files that decide it are unchanged, for
// at most Options.MaxAge (see memo.go).
func (r *Runner) Inspect(ctx context.Context, dir string) (hub.Repository, error) {
	if err := checkDir(dir); err != nil {
		return hub.Repository{}, err
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return hub.Repository{}, folderError(err)
	}
	if in, ok := r.memo.get(canon); ok && time.Since(in.at) < r.maxAge {
		if sameStamps(in.stamps, stampsOf(canon, in.repo, in.gitDir)) {
			return in.repo, nil
		}
	}
	start := time.Now()
	repo, gitDir, err := r.inspect(ctx, dir)
	if err != nil {
		r.memo.forget(canon)
		return hub.Repository{}, err
	}
	if r.maxAge > 0 {
		r.memo.put(canon, inspection{repo: repo, gitDir: gitDir, stamps: stampsOf(canon, repo, gitDir), at: start})
	}
	return repo, nil
}

// inspect asks git, and also returns the checkout's own git directory.
func (r *Runner) inspect(ctx context.Context, dir string) (hub.Repository, string, error) {
	r.runs.Add(1)
	found, res, err := r.cmd.Discover(ctx, dir)
	if err != nil {
		return hub.Repository{}, "", hub.Wrap(hub.Internal, r.logged(dir, []string{"rev-parse"}, err), "git rev-parse failed")
	}
	if res.Code != 0 {
		marker, err := repositoryMarker(dir)
		if err != nil {
			return hub.Repository{}, "", folderError(err)
		}
		if marker == "" {
			return hub.Repository{}, "", nil
		}
		cause := exitError(dir, []string{"rev-parse"}, res, fmt.Errorf("exit status %d although %s exists", res.Code, marker))
		return hub.Repository{}, "", hub.Wrap(hub.Internal, cause, "git could not inspect the folder")
	}
	repo := hub.Repository{TopLevel: found.Top, CommonDir: found.CommonDir}
	if repo.Branch, err = r.branch(ctx, found); err != nil {
		return hub.Repository{}, "", err
	}
	return repo, found.GitDir, nil
}

// branch returns the branch checked out in the work tree top, or "" when
// HEAD is detached. It reads the full ref and strips refs/heads/ itself:
// `symbolic-ref --short` prints "heads/main" when a tag is also named main.
func (r *Runner) branch(ctx context.Context, repo gitcmd.Repo) (string, error) {
	top := repo.Top
	res, err := r.runIn(ctx, repo, "symbolic-ref", "--quiet", "HEAD")
	if err != nil {
		return "", hub.Wrap(hub.Internal, err, "git symbolic-ref failed")
	}
	switch res.Code {
	case 0:
		ref := strings.TrimSuffix(string(res.Stdout), "\n")
		if ref == "" || strings.Contains(ref, "\n") {
			cause := fmt.Errorf("git symbolic-ref in %s: unexpected output %q", top, res.Stdout)
			return "", hub.Wrap(hub.Internal, cause, "git symbolic-ref failed")
		}
		return strings.TrimPrefix(ref, "refs/heads/"), nil
	case 1: // documented: HEAD is not a symbolic ref, i.e. detached
		return "", nil
	default:
		cause := exitError(top, []string{"symbolic-ref", "--quiet", "HEAD"}, res, nil)
		return "", hub.Wrap(hub.Internal, cause, "git symbolic-ref failed")
	}
}

// Init creates an empty repository in the existing directory dir, per
// hub.GitRunner. It runs `git -C dir init` rather than `git init dir`:
// the latter would create dir (and its parents) had it vanished since it
// was checked, while -C fails on a missing directory.
func (r *Runner) Init(ctx context.Context, dir string) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	// The folder's stamps could miss a .git made within one timestamp
	// tick of an inspection, so the inspection is dropped outright.
	if canon, err := filepath.EvalSymlinks(dir); err == nil {
		defer r.memo.forget(canon)
	}
	res, err := r.runOutside(ctx, dir, "init", "--quiet")
	if err != nil {
		return hub.Wrap(hub.Internal, err, "git init failed")
	}
	if res.Code != 0 {
		cause := exitError(dir, []string{"init", "--quiet"}, res, nil)
		return hub.Wrap(hub.Internal, cause, "git init failed")
	}
	return nil
}

// checkDir refuses a relative path and anything but an existing directory.
func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return hub.Errorf(hub.Invalid, "folder path must be absolute")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return folderError(err)
	}
	if !fi.IsDir() {
		return hub.Wrap(hub.Invalid, &fs.PathError{Op: "git", Path: dir, Err: syscall.ENOTDIR}, "not a folder")
	}
	return nil
}

// folderError reports a failure to look at the folder; a missing one is
// NotFound and satisfies errors.Is(err, fs.ErrNotExist).
func folderError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return hub.Wrap(hub.NotFound, err, "folder not found")
	}
	return hub.Wrap(hub.Internal, err, "folder could not be inspected")
}
