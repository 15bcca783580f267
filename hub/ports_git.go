package hub

import "context"

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
