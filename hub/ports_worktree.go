package hub

import "context"

// The Git port's worktree part: what the worktree family asks of Git.
// GitRunner embeds it, so one adapter runs every git command.

// WorktreeGit lists, makes, inspects and removes the checkouts of a
// repository. Like every GitRunner method, it never decides from git's
// human-readable messages (the service checks what it can before git
// runs, and a git failure is then a plain error), and no program a
// repository's config names ever runs: not a hook, filter, fsmonitor,
// credential helper or ssh command of the repository's. Nothing here
// passes --force but RemoveWorktree's single one, and nothing deletes a
// branch.
type WorktreeGit interface {
	// ListWorktrees lists every checkout of the repository holding dir
	// (a main checkout or a linked tree: both list the same family),
	// main first, as `git worktree list --porcelain -z` does; at most
	// MaxWorktrees entries, more is an error. A dir in no repository is
	// an error satisfying errors.Is(err, ErrNoRepository).
	ListWorktrees(ctx context.Context, dir string) (WorktreeListing, error)
	// Refs lists the repository's local branches ("main") and
	// remote-tracking branches ("origin/main"; no symbolic origin/HEAD),
	// each sorted.
	Refs(ctx context.Context, dir string) (local, remote []string, err error)
	// AddWorktree makes a linked tree at req.Dest (absolute, missing,
	// its parent existing) from the main checkout req.Main, as req.Mode
	// says, and checks it out; it never resets or moves an existing
	// branch. On failure after git made the tree, the tree is left as it
	// is and the error says so (errors.As *WorktreeAddError).
	AddWorktree(ctx context.Context, req AddWorktreeRequest) error
	// CheckOutWorktree checks the linked tree at dir out again from its
	// HEAD (`git reset --hard`, through the same guard against the
	// repository's programs): it completes a tree whose making was cut
	// between git making it and checking it out, and removes the locks a
	// killed git leaves on a tree it was making (git worktree add locks a
	// new tree until it is done; its checkout holds the tree's
	// index.lock). Changes to tracked files are overwritten;
	// untracked files stay. The caller uses it only on a tree nothing has
	// worked in yet.
	CheckOutWorktree(ctx context.Context, dir string) error
	// ReadStamp reads the identity stamp the Hub wrote into a linked
	// tree's git directory: "" with a nil error when there is none, an
	// error when it cannot be read (then the tree's identity is
	// uncertain).
	ReadStamp(ctx context.Context, gitDir string) (string, error)
	// WriteStamp writes token as the stamp of the linked tree whose git
	// directory is gitDir: created exclusively (an existing stamp is an
	// error satisfying errors.Is(err, fs.ErrExist)), private, synced.
	// Git removes it with the tree, so a later tree at the same place
	// gets another identity.
	WriteStamp(ctx context.Context, gitDir, token string) error
	// InspectTree reports what deleting the linked tree at dir would
	// meet: operations in progress, submodules, nested repositories, and
	// every path `git status` lists as changed, untracked or ignored
	// (folders wholly ignored or untracked as one "dir/" entry).
	InspectTree(ctx context.Context, dir string) (TreeFacts, error)
	// RemoveWorktree runs `git worktree remove` of the linked tree at
	// dir from the main checkout main: with one --force when force is
	// set (the tree has changes the caller saw and confirmed), which git
	// needs to remove changed or untracked files; never twice (a locked
	// tree stays). The branch stays.
	RemoveWorktree(ctx context.Context, main, dir string, force bool) error
	// DiscardWorktree removes a linked tree git did not finish making,
	// one no checkout can complete (a kill cut git before it wrote the
	// tree's HEAD, say): `git worktree remove --force` when git still
	// can; else, when the tree's folder holds nothing but its .git file,
	// that file, the folder and the tree's administrative directory. A
	// folder holding anything else is kept (an error).
	DiscardWorktree(ctx context.Context, main, dir string) error
	// Fetch fetches every remote of the repository at dir once, with
	// only creds lent (as a workspace session is lent them) and no
	// prompt: an error satisfying errors.As *FetchError says whether
	// authentication or the network failed.
	Fetch(ctx context.Context, dir string, creds SessionCredentials) error
}

// MaxWorktrees bounds the checkouts of one repository the Hub lists.
const MaxWorktrees = 64

// ErrNoRepository is ListWorktrees' error for a folder in no
// repository.
var ErrNoRepository = Errorf(NotFound, "the folder is in no Git repository")

// WorktreeListing is a repository's checkouts as git lists them.
type WorktreeListing struct {
	// CommonDir is the repository's canonical common Git directory.
	CommonDir string
	// Bare is true for a bare repository (no main checkout).
	Bare    bool
	Entries []WorktreeEntry
}

// WorktreeEntry is one checkout git lists.
type WorktreeEntry struct {
	// Path is the tree's folder as git records it (absolute).
	Path string
	// GitDir is the checkout's canonical git directory: CommonDir for
	// the main checkout, CommonDir/worktrees/<name> for a linked tree.
	GitDir string
	// Head is the commit checked out (full hex), "" in a repository
	// without commits.
	Head string
	// Branch is the short name of the branch checked out, "" when
	// detached.
	Branch   string
	Detached bool
	Main     bool
	// Locked is `git worktree lock`; Prunable says git considers the
	// tree gone (its folder is missing).
	Locked, Prunable bool
}

// WorktreeMode is how a new tree gets its branch.
type WorktreeMode string

// The modes.
const (
	// NewBranch makes Branch from Base (a local or remote branch), not
	// tracking it.
	NewBranch WorktreeMode = "new-branch"
	// ExistingLocal checks out the local branch Branch.
	ExistingLocal WorktreeMode = "existing-local"
	// RemoteTracking makes Branch from the remote branch Base, tracking
	// it.
	RemoteTracking WorktreeMode = "remote-tracking"
)

// AddWorktreeRequest says what tree to make.
type AddWorktreeRequest struct {
	// Main is the main checkout's top level; git runs there.
	Main string
	// Dest is the new tree's absolute folder.
	Dest   string
	Mode   WorktreeMode
	Branch string
	// Base is the start point: a local branch ("main") or a remote one
	// ("origin/main"), as BaseRemote says; unused by ExistingLocal.
	Base       string
	BaseRemote bool
}

// WorktreeAddError is AddWorktree's error when git made the tree but a
// later step (its checkout) failed: the tree is kept.
type WorktreeAddError struct {
	// Made is the tree's git directory.
	Made string
	Err  error
}

func (e *WorktreeAddError) Error() string {
	return "the worktree was made but not completed: " + e.Err.Error()
}
func (e *WorktreeAddError) Unwrap() error { return e.Err }

// TreeFacts is what InspectTree found.
type TreeFacts struct {
	// InProgress names the first Git operation found in progress in the
	// tree (index.lock, rebase-merge, rebase-apply, MERGE_HEAD,
	// CHERRY_PICK_HEAD, REVERT_HEAD, sequencer, BISECT_START), "" when
	// none.
	InProgress string
	// Submodules is true when the tree has initialized submodules.
	Submodules bool
	// NestedRepository is the checkout-relative path of the first
	// repository found inside the tree (a submodule's checkout, a
	// cloned folder, a bare repository), "" when none.
	NestedRepository string
	// Entries are git status's entries.
	Entries []StatusEntry
}

// StatusEntry is one path git status lists.
type StatusEntry struct {
	// Code is the porcelain v1 XY code: "??" untracked, "!!" ignored,
	// anything else a change to a tracked file.
	Code string
	// Path is checkout-relative, valid UTF-8; a folder ends in "/".
	Path string
}

// FetchError is Fetch's error when git ran and failed.
type FetchError struct {
	// Authentication is true when the remote refused the credentials
	// (or asked for some and none were lent); false for the network
	// (unreachable, timed out, refused).
	Authentication bool
	Err            error
}

func (e *FetchError) Error() string { return "fetch failed: " + e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }
