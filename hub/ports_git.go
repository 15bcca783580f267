package hub

import (
	"context"
	"io"
)

// The Git port: the semantic Git operations the registry needs.

// GitRunner performs the Git operations the core needs, as semantic calls
// rather than command lines. Implementations never decide anything from
// git's human-readable (and translated) messages. Methods are safe for
// concurrent use and honour ctx.
type GitRunner interface {
	// Inspect describes the Git checkout that contains dir (dir itself or
	// an ancestor). For a directory that is in no repository it returns a
	// zero Repository and a nil error. When git cannot tell (git missing,
	// timed out, refused the directory as unsafe, a broken repository) it
	// returns an error, and the caller treats the answer as unknown. A dir
	// that does not exist is an error satisfying errors.Is(err,
	// fs.ErrNotExist); a relative dir is Invalid.
	Inspect(ctx context.Context, dir string) (Repository, error)
	// Init creates an empty repository in the existing directory dir; it
	// never creates dir. Init of a repository leaves it as it is.
	Init(ctx context.Context, dir string) error
	// Clone starts `git clone` of req.URL into req.Target in a pseudo-
	// terminal of its own, so that git shows its progress and may prompt
	// (a user name, a host key), and returns the running clone. Git runs
	// with Wharf's own configuration only (no system or global config, no
	// HOME, NETRC or ambient SSH identity or agent; the URL after `--`), in
	// its own process group, with only req.Credentials lent, as a
	// workspace session is lent them. Target must not exist and its
	// parent must; a failure to start is an error and leaves nothing. A
	// clone that fails or is killed leaves no Target either, unless the
	// path was given to something else meanwhile: that is left as it is,
	// and Wait's message names it.
	// ctx bounds the start only: the clone runs until it exits or Kill.
	Clone(ctx context.Context, req CloneRequest) (CloneRun, error)
	// WorktreeGit lists, makes, inspects and removes a repository's
	// checkouts, and fetches its remotes (ports_worktree.go).
	WorktreeGit
}

// CloneRequest says what to clone where.
type CloneRequest struct {
	// URL is the source, checked by hub/clone (no embedded credentials,
	// no option-like or ext:: URL).
	URL string
	// Target is the absolute folder git makes.
	Target string
	// Credentials is what the clone is lent: the selected credential
	// alone, for the URL's host (the zero value: nothing).
	Credentials SessionCredentials
}

// CloneRun is a running clone: its terminal and its process.
type CloneRun interface {
	// Read reads the terminal's raw output (the core normalizes it); it
	// returns io.EOF once git has exited and all its output was read.
	io.Reader
	// Write types into the terminal, as a person would answer a prompt.
	io.Writer
	// Wait waits for git to exit: nil when it succeeded, else an error
	// whose public message (MessageOf) says how it ended (its exit status,
	// killed), never its output.
	Wait() error
	// Kill ends the whole process group (a polite signal, then a forced
	// one after a bounded grace) and returns once it is gone. Killing an
	// ended clone does nothing.
	Kill() error
}

// Repository describes a Git checkout.
type Repository struct {
	// TopLevel is the absolute root of the checkout's work tree; "" means
	// dir is in no repository.
	TopLevel string
	// CommonDir is the absolute Git directory shared by a main checkout and
	// its linked worktrees.
	CommonDir string
	// Branch is the short name of the checked-out branch, "" when HEAD is
	// detached.
	Branch string
}
