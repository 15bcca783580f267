package gitexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of making and removing a tree, which grow with the tree.
const (
	checkoutTimeout = 10 * time.Minute
	removeTimeout   = 10 * time.Minute
)

// AddWorktree makes and checks out a linked tree, per hub.WorktreeGit,
// in two steps (worktree.go): `worktree add --no-checkout` in the
// repository, then `reset --hard` through the shadow in the new tree.
func (r *Runner) AddWorktree(ctx context.Context, req hub.AddWorktreeRequest) error {
	w, err := newWorktree(req)
	if err != nil {
		return err
	}
	if err := checkDir(req.Main); err != nil {
		return err
	}
	if err := checkDir(filepath.Dir(req.Dest)); err != nil {
		return err
	}
	if _, err := os.Lstat(req.Dest); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			return hub.Errorf(hub.Conflict, "the worktree's folder already exists")
		}
		return folderError(err)
	}
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.AddWorktree(ctx, req.Main, w)
	if res, err = r.done(req.Main, []string{"worktree", "add"}, start, res, err); err != nil {
		return hub.Wrap(hub.Internal, err, "git worktree add failed")
	}
	if res.Code != 0 {
		cause := exitError(req.Main, []string{"worktree", "add", "--", req.Dest}, res, nil)
		return hub.Wrap(hub.Internal, cause, "git could not make the worktree")
	}
	made, err := madeGitDir(req.Dest)
	if err != nil {
		return &hub.WorktreeAddError{Err: hub.Wrap(hub.Internal, err, "the new worktree's git directory could not be read")}
	}
	repo, err := r.treeAt(ctx, req.Dest)
	if err != nil {
		return &hub.WorktreeAddError{Made: made, Err: err}
	}
	if repo.GitDir != made {
		cause := fmt.Errorf("git found %s in %s, which names %s", repo.GitDir, req.Dest, made)
		return &hub.WorktreeAddError{Made: made, Err: hub.Wrap(hub.Internal, cause, "the new worktree is not the one git made")}
	}
	if err := r.checkOut(ctx, repo); err != nil {
		return &hub.WorktreeAddError{Made: made, Err: err}
	}
	return nil
}

// CheckOutWorktree checks the linked tree at dir out from its HEAD, per
// hub.WorktreeGit: `reset --hard` through the shadow, as AddWorktree's
// second step.
func (r *Runner) CheckOutWorktree(ctx context.Context, dir string) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return hub.Errorf(hub.Invalid, "the worktree's folder must be a clean absolute path")
	}
	repo, err := r.treeAt(ctx, dir)
	if err != nil {
		return err
	}
	if repo.GitDir == repo.CommonDir || repo.Top != dir {
		return hub.Errorf(hub.Invalid, "the folder is not a linked worktree")
	}
	// git worktree add locks a tree it is making with a "locked" file in
	// its git directory until it is done, and the checkout holds the
	// tree's index.lock while it writes: a git killed in between leaves
	// them, and nothing else works in this tree (the caller's contract).
	for _, lock := range []string{"locked", "index.lock"} {
		if err := os.Remove(filepath.Join(repo.GitDir, lock)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return hub.Wrap(hub.Internal, err, "the worktree's lock could not be removed")
		}
	}
	return r.checkOut(ctx, repo)
}

// DiscardWorktree removes a tree git did not finish making, per
// hub.WorktreeGit.
func (r *Runner) DiscardWorktree(ctx context.Context, main, dir string) error {
	if err := r.RemoveWorktree(ctx, main, dir, true); err == nil {
		return nil
	}
	// git refuses a tree whose git directory is not a repository yet (no
	// HEAD): such a tree was never checked out, so its folder holds its
	// .git file alone, naming a directory under the repository's
	// worktrees/. Anything else and it is kept.
	repo, err := r.treeAt(ctx, main)
	if err != nil {
		return err
	}
	gitDir, err := madeGitDir(dir)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "the unfinished worktree's git directory could not be read")
	}
	if filepath.Dir(gitDir) != filepath.Join(repo.CommonDir, "worktrees") {
		return hub.Errorf(hub.Internal, "the unfinished worktree's git directory is not the repository's")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return folderError(err)
	}
	if len(entries) != 1 || entries[0].Name() != ".git" || !entries[0].Type().IsRegular() {
		return hub.Errorf(hub.Conflict, "the unfinished worktree's folder holds files; it is kept")
	}
	for _, rm := range []func() error{
		func() error { return os.Remove(filepath.Join(dir, ".git")) },
		func() error { return os.Remove(dir) },
		func() error { return os.RemoveAll(gitDir) },
	} {
		if err := rm(); err != nil {
			return hub.Wrap(hub.Internal, err, "the unfinished worktree could not be removed")
		}
	}
	return nil
}

// checkOut runs `reset --hard` in the tree repo through the shadow.
func (r *Runner) checkOut(ctx context.Context, repo gitcmd.Repo) error {
	args := []string{"reset", "--hard", "--quiet"}
	res, err := r.runInWith(ctx, repo, gitcmd.With{Timeout: checkoutTimeout}, args...)
	if err == nil && res.Code != 0 {
		err = exitError(repo.Top, args, res, nil)
	}
	if err != nil {
		return hub.Wrap(hub.Internal, err, "git could not check the worktree out")
	}
	return nil
}

// newWorktree is the tree req asks for, as gitcmd makes it: a new
// branch from a full ref (tracking it for RemoteTracking), or the short
// name of an existing branch, which git checks out rather than detach.
func newWorktree(req hub.AddWorktreeRequest) (gitcmd.NewWorktree, error) {
	if !filepath.IsAbs(req.Dest) || filepath.Clean(req.Dest) != req.Dest || filepath.Dir(req.Dest) == req.Dest {
		return gitcmd.NewWorktree{}, hub.Errorf(hub.Invalid, "the worktree's folder must be a clean absolute path")
	}
	if !filepath.IsAbs(req.Main) {
		return gitcmd.NewWorktree{}, hub.Errorf(hub.Invalid, "folder path must be absolute")
	}
	bad := func(s string) bool { return s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, "\x00\n") }
	w := gitcmd.NewWorktree{Dest: req.Dest}
	switch req.Mode {
	case hub.NewBranch:
		w.Branch, w.Start = req.Branch, "refs/heads/"+req.Base
		if req.BaseRemote {
			w.Start = "refs/remotes/" + req.Base
		}
	case hub.RemoteTracking:
		w.Branch, w.Track, w.Start = req.Branch, true, "refs/remotes/"+req.Base
	case hub.ExistingLocal:
		w.Start = req.Branch
	default:
		return gitcmd.NewWorktree{}, hub.Errorf(hub.Invalid, "unknown worktree mode")
	}
	if bad(req.Branch) || req.Mode != hub.ExistingLocal && bad(req.Base) {
		return gitcmd.NewWorktree{}, hub.Errorf(hub.Invalid, "git refuses this branch name")
	}
	return w, nil
}

// madeGitDir returns the canonical git directory the .git file git wrote
// into dest names.
func madeGitDir(dest string) (string, error) {
	b, err := readSmall(filepath.Join(dest, ".git"), maxGitdirFile)
	if err != nil {
		return "", err
	}
	p, ok := strings.CutPrefix(strings.TrimRight(string(b), "\n"), "gitdir: ")
	if !ok || strings.Contains(p, "\n") {
		return "", fmt.Errorf("%s/.git is no gitdir file", dest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dest, p)
	}
	return filepath.EvalSymlinks(p)
}

// RemoveWorktree removes the linked tree at dir, per hub.WorktreeGit:
// `worktree remove [--force] -- dir` through the shadow of the main
// checkout main, so that the status git runs of the tree first (without
// --force) uses no filter or fsmonitor of the repository's. It has a
// timeout of its own (removeTimeout); a timeout satisfies
// errors.Is(err, context.DeadlineExceeded), and some of the tree's files
// may be gone by then.
func (r *Runner) RemoveWorktree(ctx context.Context, main, dir string, force bool) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return hub.Errorf(hub.Invalid, "the worktree's folder must be a clean absolute path")
	}
	repo, err := r.treeAt(ctx, main)
	if err != nil {
		return err
	}
	if repo.GitDir != repo.CommonDir {
		return hub.Errorf(hub.Invalid, "the folder is not a main checkout")
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	args = append(args, "--", dir)
	res, err := r.runInWith(ctx, repo, gitcmd.With{Timeout: removeTimeout}, args...)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "git worktree remove failed")
	}
	if res.Code != 0 {
		return hub.Wrap(hub.Internal, exitError(repo.Top, args, res, nil), "git could not remove the worktree")
	}
	return nil
}
