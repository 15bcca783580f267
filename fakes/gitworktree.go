package fakes

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.WorktreeGit = (*Git)(nil)

// The worktree operations, for FailNext and Calls.
const (
	GitListWorktrees  = "list-worktrees"
	GitRefs           = "refs"
	GitAddWorktree    = "add-worktree"
	GitCheckOut       = "check-out-worktree"
	GitReadStamp      = "read-stamp"
	GitWriteStamp     = "write-stamp"
	GitInspectTree    = "inspect-tree"
	GitRemoveWorktree = "remove-worktree"
	GitFetch          = "fetch"
)

// The fake's worktrees. A repository's family lives in memory, keyed by
// its main checkout (a folder of the FS holding a ".git" directory): its
// local and remote-tracking branches, each at one fake commit, and its
// linked trees. A linked tree is a folder of the FS holding a ".git"
// file, with a git directory <main>/.git/worktrees/<name> named after
// the folder, as git names it. Tests script what git would find on disk
// (SetRefs, PushRemote, SetTreeFacts, LockWorktree) and the FS removes a
// tree's folder behind git's back (RemoveAll).

// family is one repository's worktrees.
type family struct {
	main   string            // the main checkout's top level
	local  map[string]string // branch -> commit
	remote map[string]string // "origin/x" -> commit
	pushed map[string]string // remote branches the next fetch brings
	trees  []*linkedTree
}

type linkedTree struct {
	path, gitDir, branch string
	locked               bool
	facts                hub.TreeFacts
}

// fakeCommit is the commit every ref of the fake points at: a full hex
// object name.
var fakeCommit = func() string {
	sum := sha1.Sum([]byte("fakes.Git commit"))
	return hex.EncodeToString(sum[:])
}()

// familyOf returns the family of the main checkout top, made on first
// use with the branch checked out there. g.mu is held.
func (g *Git) familyOf(top string) *family {
	if g.families == nil {
		g.families = map[string]*family{}
	}
	f := g.families[top]
	if f == nil {
		f = &family{main: top, local: map[string]string{}, remote: map[string]string{}, pushed: map[string]string{}}
		if b := g.mainBranch(top); b != "" {
			f.local[b] = fakeCommit
		} else {
			f.local["main"] = fakeCommit
		}
		g.families[top] = f
	}
	return f
}

// mainBranch is the branch checked out in the main checkout top, "" when
// detached. g.mu is held.
func (g *Git) mainBranch(top string) string {
	b, ok := g.branches[top]
	if !ok {
		return "main"
	}
	return b
}

// SetRefs sets the local and remote-tracking branches ("origin/x") of
// the repository whose main checkout is top.
func (g *Git) SetRefs(top string, local, remote []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.familyOf(path.Clean(top))
	f.local, f.remote = map[string]string{}, map[string]string{}
	for _, b := range local {
		f.local[b] = fakeCommit
	}
	for _, b := range remote {
		f.remote[b] = fakeCommit
	}
}

// PushRemote gives the remote of the repository whose main checkout is
// top the branch ref ("origin/x"): the next Fetch brings it.
func (g *Git) PushRemote(top, ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.familyOf(path.Clean(top)).pushed[ref] = fakeCommit
}

// SetTreeFacts sets what InspectTree finds in the linked tree at dir.
func (g *Git) SetTreeFacts(dir string, facts hub.TreeFacts) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.treeAt(path.Clean(dir)); t != nil {
		t.facts = facts
	}
}

// LockWorktree locks the linked tree at dir, as `git worktree lock`.
func (g *Git) LockWorktree(dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.treeAt(path.Clean(dir)); t != nil {
		t.locked = true
	}
}

// treeAt returns the linked tree whose folder is dir. g.mu is held.
func (g *Git) treeAt(dir string) *linkedTree {
	for _, f := range g.families {
		for _, t := range f.trees {
			if t.path == dir {
				return t
			}
		}
	}
	return nil
}

// familyAt returns the family holding dir, as git finds it: the nearest
// ".git" up from dir, a directory for a main checkout, a file for a
// linked tree this fake made. Nothing found is hub.ErrNoRepository.
func (g *Git) familyAt(ctx context.Context, dir string) (*family, error) {
	d, err := g.directory(ctx, dir)
	if err != nil {
		return nil, err
	}
	for ; ; d = path.Dir(d) {
		fi, err := g.fs.Lstat(path.Join(d, ".git"))
		switch {
		case err == nil && fi.IsDir():
			g.mu.Lock()
			defer g.mu.Unlock()
			return g.familyOf(d), nil
		case err == nil:
			g.mu.Lock()
			defer g.mu.Unlock()
			for _, f := range g.families {
				for _, t := range f.trees {
					if t.path == d {
						return f, nil
					}
				}
			}
			return nil, hub.Errorf(hub.Internal, "git could not read the repository")
		case !errors.Is(err, fs.ErrNotExist):
			return nil, hub.Wrap(hub.Internal, err, "git could not read the repository")
		}
		if d == "/" {
			return nil, hub.ErrNoRepository
		}
	}
}

// ListWorktrees lists the family holding dir: the main checkout, then
// the linked trees by path; a tree whose folder is gone is Prunable.
func (g *Git) ListWorktrees(ctx context.Context, dir string) (hub.WorktreeListing, error) {
	if err := g.begin(GitListWorktrees); err != nil {
		return hub.WorktreeListing{}, err
	}
	f, err := g.familyAt(ctx, dir)
	if err != nil {
		return hub.WorktreeListing{}, err
	}
	g.mu.Lock()
	common := path.Join(f.main, ".git")
	branch := g.mainBranch(f.main)
	main := hub.WorktreeEntry{Path: f.main, GitDir: common, Head: fakeCommit, Branch: branch, Detached: branch == "", Main: true}
	entries := []hub.WorktreeEntry{main}
	trees := slices.Clone(f.trees)
	g.mu.Unlock()
	slices.SortFunc(trees, func(a, b *linkedTree) int { return strings.Compare(a.path, b.path) })
	for _, t := range trees {
		_, err := g.fs.Lstat(t.path)
		entries = append(entries, hub.WorktreeEntry{Path: t.path, GitDir: t.gitDir, Head: fakeCommit, Branch: t.branch,
			Locked: t.locked, Prunable: err != nil})
	}
	return hub.WorktreeListing{CommonDir: common, Entries: entries}, nil
}

// Refs lists the family's branches, sorted.
func (g *Git) Refs(ctx context.Context, dir string) (local, remote []string, err error) {
	if err := g.begin(GitRefs); err != nil {
		return nil, nil, err
	}
	f, err := g.familyAt(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(maps.Keys(f.local)), slices.Sorted(maps.Keys(f.remote)), nil
}

// AddWorktree checks what git checks (the mode's branches, the branch in
// use, the destination) and makes the tree: its folder and .git file in
// the FS, its git directory, and a new branch when the mode makes one.
func (g *Git) AddWorktree(ctx context.Context, req hub.AddWorktreeRequest) error {
	if err := g.begin(GitAddWorktree); err != nil {
		return err
	}
	if !path.IsAbs(req.Dest) || path.Clean(req.Dest) != req.Dest || req.Dest == "/" {
		return hub.Errorf(hub.Invalid, "the worktree's folder must be a clean absolute path")
	}
	top, err := g.directory(ctx, req.Main)
	if err != nil {
		return err
	}
	if fi, err := g.fs.Lstat(path.Join(top, ".git")); err != nil || !fi.IsDir() {
		return hub.Errorf(hub.Invalid, "the folder is not a main checkout")
	}
	if _, err := g.directory(ctx, path.Dir(req.Dest)); err != nil {
		return err
	}
	if _, err := g.fs.Lstat(req.Dest); !errors.Is(err, fs.ErrNotExist) {
		return hub.Errorf(hub.Conflict, "the worktree's folder already exists")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.familyOf(top)
	if err := f.check(req, g.mainBranch(top)); err != nil {
		return err
	}
	name := g.adminName(f, path.Base(req.Dest))
	if err := g.fs.Mkdir(req.Dest); err != nil {
		return hub.Wrap(hub.Internal, err, "git could not make the worktree")
	}
	if err := g.fs.WriteFile(path.Join(req.Dest, ".git")); err != nil {
		return &hub.WorktreeAddError{Err: hub.Wrap(hub.Internal, err, "git could not make the worktree")}
	}
	gitDir := path.Join(top, ".git", "worktrees", name)
	g.fs.MkdirAll(gitDir)
	if req.Mode != hub.ExistingLocal {
		f.local[req.Branch] = fakeCommit
	}
	f.trees = append(f.trees, &linkedTree{path: req.Dest, gitDir: gitDir, branch: req.Branch})
	return nil
}

// CheckOutWorktree checks out the linked tree at dir: the fake's trees
// are always whole, so it only checks that dir is one, and unlocks it.
func (g *Git) CheckOutWorktree(ctx context.Context, dir string) error {
	if err := g.begin(GitCheckOut); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.treeAt(path.Clean(dir))
	if t == nil {
		return hub.Errorf(hub.Invalid, "the folder is not a linked worktree")
	}
	t.locked = false
	return nil
}

// DiscardWorktree removes a tree as a forced RemoveWorktree does (the
// fake's trees are always whole).
func (g *Git) DiscardWorktree(ctx context.Context, main, dir string) error {
	return g.RemoveWorktree(ctx, main, dir, true)
}

// check refuses what git refuses: a branch made anew that exists, a base
// that does not, a branch to check out that does not exist or is
// checked out.
func (f *family) check(req hub.AddWorktreeRequest, mainBranch string) error {
	refuse := func(why string) error { return hub.Errorf(hub.Internal, "git could not make the worktree: %s", why) }
	switch req.Mode {
	case hub.NewBranch, hub.RemoteTracking:
		base := f.local
		if req.BaseRemote || req.Mode == hub.RemoteTracking {
			base = f.remote
		}
		if req.Branch == "" || f.local[req.Branch] != "" {
			return refuse("the branch exists")
		}
		if base[req.Base] == "" {
			return refuse("no such base")
		}
	case hub.ExistingLocal:
		if f.local[req.Branch] == "" {
			return refuse("no such branch")
		}
		if req.Branch == mainBranch || slices.ContainsFunc(f.trees, func(t *linkedTree) bool { return t.branch == req.Branch }) {
			return refuse("the branch is checked out")
		}
	default:
		return hub.Errorf(hub.Invalid, "unknown worktree mode")
	}
	return nil
}

// adminName is the name git gives a tree's git directory: the folder's
// name, numbered while taken. g.mu is held.
func (g *Git) adminName(f *family, base string) string {
	taken := func(name string) bool {
		_, err := g.fs.Lstat(path.Join(f.main, ".git", "worktrees", name))
		return err == nil
	}
	name := base
	for i := 1; taken(name); i++ {
		name = base + strconv.Itoa(i)
	}
	return name
}

// ReadStamp reads the stamp written into gitDir, "" when none.
func (g *Git) ReadStamp(ctx context.Context, gitDir string) (string, error) {
	if err := g.begin(GitReadStamp); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", hub.Wrap(hub.Internal, err, "the stamp was cancelled")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stamps[path.Clean(gitDir)], nil
}

// WriteStamp stamps gitDir, an existing folder, once.
func (g *Git) WriteStamp(ctx context.Context, gitDir, token string) error {
	if err := g.begin(GitWriteStamp); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Internal, err, "the stamp was cancelled")
	}
	if token == "" || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return hub.Errorf(hub.Invalid, "a stamp is one short printable token")
	}
	if fi, err := g.fs.Lstat(gitDir); err != nil || !fi.IsDir() {
		return hub.Errorf(hub.Internal, "the worktree's stamp could not be written")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gitDir = path.Clean(gitDir)
	if g.stamps[gitDir] != "" {
		return hub.Wrap(hub.Conflict, &fs.PathError{Op: "open", Path: gitDir, Err: fs.ErrExist}, "the worktree is stamped already")
	}
	if g.stamps == nil {
		g.stamps = map[string]string{}
	}
	g.stamps[gitDir] = token
	return nil
}

// InspectTree answers the facts set for the tree at dir (none by
// default).
func (g *Git) InspectTree(ctx context.Context, dir string) (hub.TreeFacts, error) {
	if err := g.begin(GitInspectTree); err != nil {
		return hub.TreeFacts{}, err
	}
	d, err := g.directory(ctx, dir)
	if err != nil {
		return hub.TreeFacts{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.treeAt(d); t != nil {
		facts := t.facts
		facts.Entries = slices.Clone(facts.Entries)
		return facts, nil
	}
	if g.families[d] != nil {
		return hub.TreeFacts{}, nil
	}
	return hub.TreeFacts{}, hub.Errorf(hub.Invalid, "the folder is not the top of a checkout")
}

// RemoveWorktree removes the linked tree at dir of the family of main,
// as git does: never the main checkout or a locked tree, and without
// force never a tree with changes or untracked files (ignored ones go)
// or with submodules. Its folder, git directory and stamp go; its
// branch stays.
func (g *Git) RemoveWorktree(ctx context.Context, main, dir string, force bool) error {
	if err := g.begin(GitRemoveWorktree); err != nil {
		return err
	}
	top, err := g.directory(ctx, main)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.families[top]
	if f == nil {
		return hub.Errorf(hub.Invalid, "the folder is not a main checkout")
	}
	i := slices.IndexFunc(f.trees, func(t *linkedTree) bool { return t.path == path.Clean(dir) })
	if i < 0 {
		return hub.Errorf(hub.Internal, "git could not remove the worktree: not a linked tree")
	}
	t := f.trees[i]
	changed := slices.ContainsFunc(t.facts.Entries, func(e hub.StatusEntry) bool { return e.Code != "!!" })
	switch {
	case t.locked:
		return hub.Errorf(hub.Internal, "git could not remove the worktree: it is locked")
	case !force && (changed || t.facts.Submodules):
		return hub.Errorf(hub.Internal, "git could not remove the worktree: it has changes")
	}
	for _, p := range []string{t.path, t.gitDir} {
		if err := g.fs.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return hub.Wrap(hub.Internal, err, "git could not remove the worktree")
		}
	}
	delete(g.stamps, t.gitDir)
	f.trees = slices.Delete(f.trees, i, i+1)
	return nil
}

// Fetch brings the remote branches PushRemote gave the family holding
// dir. A failure is scripted with FailNext(GitFetch, &hub.FetchError{…}).
func (g *Git) Fetch(ctx context.Context, dir string, _ hub.SessionCredentials) error {
	if err := g.begin(GitFetch); err != nil {
		return err
	}
	f, err := g.familyAt(ctx, dir)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	maps.Copy(f.remote, f.pushed)
	clear(f.pushed)
	return nil
}

// RemoveAll removes p and everything under it, following no link at its
// end: how a test deletes a folder behind the Hub's back.
func (f *FS) RemoveAll(p string) error {
	if err := f.before("remove", p); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, name, err := f.parent(p)
	if err != nil {
		return err
	}
	if parent.children[name] == nil {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	}
	delete(parent.children, name)
	return nil
}
