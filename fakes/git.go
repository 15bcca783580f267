package fakes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"syscall"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.GitRunner = (*Git)(nil)

// Git is a hub.GitRunner over an FS: a repository is a directory holding a
// ".git" directory, and its branch is whatever the test recorded (Init
// records "main"). Tests script it with SetBranch, ScriptClone and
// FailNext and count calls with Calls. Safe for concurrent use.
type Git struct {
	fs *FS

	mu       sync.Mutex
	branches map[string]string      // by top level; absent means "main"
	fail     map[string][]error     // by op, queued by FailNext
	calls    map[string]int         // by op
	clones   map[string]CloneScript // by URL (gitclone.go)
	families map[string]*family     // by main checkout (gitworktree.go)
	stamps   map[string]string      // by a linked tree's git directory
}

// The operations FailNext and Calls name.
const (
	GitInspect = "inspect"
	GitInit    = "init"
)

// NewGit returns a Git over fsys.
func NewGit(fsys *FS) *Git {
	return &Git{
		fs:       fsys,
		branches: map[string]string{},
		fail:     map[string][]error{},
		calls:    map[string]int{},
	}
}

// SetBranch records the branch checked out in the repository whose top
// level is top; "" means HEAD is detached.
func (g *Git) SetBranch(top, branch string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.branches[path.Clean(top)] = branch
}

// FailNext makes the next call of op (GitInspect, GitInit, GitClone or a
// worktree operation) return err
// without changing anything. Several calls queue up in order.
func (g *Git) FailNext(op string, err error) {
	checkGitOp(op)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fail[op] = append(g.fail[op], err)
}

// Calls reports how many times op (as FailNext names it) was called,
// failed calls included.
func (g *Git) Calls(op string) int {
	checkGitOp(op)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[op]
}

func checkGitOp(op string) {
	switch op {
	case GitInspect, GitInit, GitClone, GitListWorktrees, GitRefs, GitAddWorktree, GitCheckOut, GitReadStamp,
		GitWriteStamp, GitInspectTree, GitRemoveWorktree, GitFetch:
	default:
		panic(fmt.Sprintf("fakes.Git: unknown op %q", op))
	}
}

// begin counts a call of op and returns the failure queued for it, if any.
func (g *Git) begin(op string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[op]++
	if q := g.fail[op]; len(q) > 0 {
		g.fail[op] = q[1:]
		return q[0]
	}
	return nil
}

// Inspect walks up from dir to the nearest ".git" entry, as git does. Like
// the real runner it answers with the resolved (physical) top level. A
// ".git" that is not a directory is a linked tree AddWorktree made (its
// common directory the main checkout's), or else beyond this fake and
// reported as an error.
func (g *Git) Inspect(ctx context.Context, dir string) (hub.Repository, error) {
	if err := g.begin(GitInspect); err != nil {
		return hub.Repository{}, err
	}
	d, err := g.directory(ctx, dir)
	if err != nil {
		return hub.Repository{}, err
	}
	for ; ; d = path.Dir(d) {
		dotGit := path.Join(d, ".git")
		fi, err := g.fs.Lstat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			g.mu.Lock()
			branch, ok := g.branches[d]
			g.mu.Unlock()
			if !ok {
				branch = "main"
			}
			return hub.Repository{TopLevel: d, CommonDir: dotGit, Branch: branch}, nil
		case err == nil:
			g.mu.Lock()
			t := g.treeAt(d)
			g.mu.Unlock()
			if t != nil {
				return hub.Repository{TopLevel: d, CommonDir: path.Dir(path.Dir(t.gitDir)), Branch: t.branch}, nil
			}
			return hub.Repository{}, hub.Wrap(hub.Internal,
				fmt.Errorf("fakes.Git: %s is not a directory", dotGit), "git could not inspect the folder")
		case !errors.Is(err, fs.ErrNotExist):
			return hub.Repository{}, hub.Wrap(hub.Internal, err, "git could not inspect the folder")
		}
		if d == "/" {
			return hub.Repository{}, nil
		}
	}
}

// Init creates dir/.git through the FS (so FS.Before can fail it) and
// records branch "main". Like git, it leaves an existing repository (and
// its branch) as it is.
func (g *Git) Init(ctx context.Context, dir string) error {
	if err := g.begin(GitInit); err != nil {
		return err
	}
	d, err := g.directory(ctx, dir)
	if err != nil {
		return err
	}
	dotGit := path.Join(d, ".git")
	if err := g.fs.Mkdir(dotGit); err != nil {
		if fi, lerr := g.fs.Lstat(dotGit); errors.Is(err, fs.ErrExist) && lerr == nil && fi.IsDir() {
			return nil // reinitialized
		}
		return hub.Wrap(hub.Internal, err, "git init failed")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.branches[d] = "main"
	return nil
}

// directory checks what the real runner checks before running git and
// returns dir with its symbolic links resolved.
func (g *Git) directory(ctx context.Context, dir string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", hub.Wrap(hub.Internal, err, "git failed")
	}
	if !path.IsAbs(dir) {
		return "", hub.Errorf(hub.Invalid, "folder path must be absolute")
	}
	d, err := g.fs.EvalSymlinks(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", hub.Wrap(hub.NotFound, err, "folder not found")
		}
		return "", hub.Wrap(hub.Internal, err, "folder could not be inspected")
	}
	fi, err := g.fs.Lstat(d)
	if err != nil {
		return "", hub.Wrap(hub.NotFound, err, "folder not found")
	}
	if !fi.IsDir() {
		return "", hub.Wrap(hub.Invalid, &fs.PathError{Op: "git", Path: dir, Err: syscall.ENOTDIR}, "not a folder")
	}
	return d, nil
}
