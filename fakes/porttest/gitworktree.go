package porttest

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// WorktreeFixture is what the worktree contract runs against: a runner,
// its file system, a repository set up as described and the means to
// change it as a person or an agent would.
type WorktreeFixture struct {
	Git hub.WorktreeGit
	FS  hub.FS
	// Main is the main checkout's top level (canonical), on branch
	// "main" with at least one commit and nothing changed. "topic" is a
	// local branch checked out nowhere; the remote "origin" has "main"
	// and "feature", fetched as origin/main and origin/feature, with a
	// symbolic origin/HEAD.
	Main string
	// Dir is an existing, empty, canonical folder in no repository,
	// where the contract makes its trees.
	Dir string
	// Untracked writes the untracked file "untracked.txt" into the tree
	// at dir.
	Untracked func(t *testing.T, dir string)
	// Lock locks the tree at dir, as `git worktree lock` does.
	Lock func(t *testing.T, dir string)
	// Vanish removes the tree at dir's folder behind git's back.
	Vanish func(t *testing.T, dir string)
	// Push gives the remote a new branch name, which a fetch brings as
	// origin/<name>.
	Push func(t *testing.T, name string)
	// BreakRemote makes the remote unreachable, asking no credentials.
	BreakRemote func(t *testing.T)
}

// GitWorktrees runs the hub.WorktreeGit contract.
func GitWorktrees(t *testing.T, newFixture func(t *testing.T) WorktreeFixture) {
	t.Run("TheMainCheckoutIsListedFirst", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		l, err := f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)               // listed
		is.True(!l.Bare)            // a checkout, not a bare repository
		is.Equal(len(l.Entries), 1) // the main checkout alone
		main := l.Entries[0]
		is.Equal(main.Path, f.Main) // at its folder
		is.True(main.Main && !main.Detached && !main.Locked && !main.Prunable)
		is.Equal(main.GitDir, l.CommonDir) // whose git directory is the common one
		is.Equal(main.Branch, "main")      // on its branch
		is.Equal(len(main.Head), 40)       // at a commit
	})

	t.Run("AFolderInNoRepositoryIsNoRepository", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		_, err := f.Git.ListWorktrees(t.Context(), f.Dir)
		is.True(errors.Is(err, hub.ErrNoRepository)) // recognizable
		_, err = f.Git.ListWorktrees(t.Context(), "relative")
		is.True(err != nil && !errors.Is(err, hub.ErrNoRepository)) // a relative folder is refused
	})

	t.Run("RefsAreSortedWithoutTheRemoteHEAD", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		local, remote, err := f.Git.Refs(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(local, []string{"main", "topic"})                  // the local branches
		is.Equal(remote, []string{"origin/feature", "origin/main"}) // the remote ones, origin/HEAD left out
	})

	t.Run("EachModeMakesACheckedOutTreeTheWholeFamilyLists", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			req    hub.AddWorktreeRequest
			branch string
		}{
			{"a new branch from a local one", hub.AddWorktreeRequest{Mode: hub.NewBranch, Branch: "wt-new", Base: "main"}, "wt-new"},
			{"a new branch from a remote one", hub.AddWorktreeRequest{Mode: hub.NewBranch, Branch: "wt-remote", Base: "origin/feature", BaseRemote: true}, "wt-remote"},
			{"a tracking branch", hub.AddWorktreeRequest{Mode: hub.RemoteTracking, Branch: "feature", Base: "origin/feature", BaseRemote: true}, "feature"},
			{"an existing branch", hub.AddWorktreeRequest{Mode: hub.ExistingLocal, Branch: "topic"}, "topic"},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				f := newFixture(t)
				req := c.req
				req.Main, req.Dest = f.Main, path.Join(f.Dir, "wt")
				is.NoErr(f.Git.AddWorktree(t.Context(), req)) // made
				l, err := f.Git.ListWorktrees(t.Context(), f.Main)
				is.NoErr(err)
				is.Equal(len(l.Entries), 2) // listed after the main checkout
				e := l.Entries[1]
				is.Equal(e.Path, req.Dest)                                        // at its folder
				is.Equal(e.Branch, c.branch)                                      // on its branch
				is.True(!e.Main && !e.Detached && !e.Locked && !e.Prunable)       // a linked tree
				is.Equal(path.Dir(e.GitDir), path.Join(l.CommonDir, "worktrees")) // with a git directory of its own
				is.Equal(e.Head, l.Entries[0].Head)                               // at the base's commit
				from, err := f.Git.ListWorktrees(t.Context(), req.Dest)
				is.NoErr(err)
				is.Equal(from, l) // the tree lists the same family
				facts, err := f.Git.InspectTree(t.Context(), req.Dest)
				is.NoErr(err)
				is.Equal(facts, hub.TreeFacts{}) // checked out whole: nothing changed, nothing in progress
				local, _, err := f.Git.Refs(t.Context(), f.Main)
				is.NoErr(err)
				is.True(slices.Contains(local, c.branch))               // its branch is a local one
				is.NoErr(f.Git.CheckOutWorktree(t.Context(), req.Dest)) // checked out again
				facts, err = f.Git.InspectTree(t.Context(), req.Dest)
				is.NoErr(err)
				is.Equal(facts, hub.TreeFacts{})                                            // still whole
				is.True(f.Git.CheckOutWorktree(t.Context(), f.Main) != nil)                 // the main checkout is not a linked tree
				is.True(f.Git.CheckOutWorktree(t.Context(), path.Join(f.Dir, "no")) != nil) // nor is a missing folder
			})
		}
	})

	t.Run("ABranchInUseOrTakenIsRefusedAndNothingIsLeft", func(t *testing.T) {
		for _, c := range []struct {
			name string
			req  hub.AddWorktreeRequest
		}{
			{"the main checkout's branch", hub.AddWorktreeRequest{Mode: hub.ExistingLocal, Branch: "main"}},
			{"a linked tree's branch", hub.AddWorktreeRequest{Mode: hub.ExistingLocal, Branch: "busy"}},
			{"an existing branch made anew", hub.AddWorktreeRequest{Mode: hub.NewBranch, Branch: "topic", Base: "main"}},
			{"an existing branch made tracking", hub.AddWorktreeRequest{Mode: hub.RemoteTracking, Branch: "topic", Base: "origin/feature", BaseRemote: true}},
			{"a missing base", hub.AddWorktreeRequest{Mode: hub.NewBranch, Branch: "fresh", Base: "none"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				f := newFixture(t)
				is.NoErr(f.Git.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: f.Main, Dest: path.Join(f.Dir, "busy"),
					Mode: hub.NewBranch, Branch: "busy", Base: "main"}))
				before, err := f.Git.ListWorktrees(t.Context(), f.Main)
				is.NoErr(err)
				local, remote, err := f.Git.Refs(t.Context(), f.Main)
				is.NoErr(err)
				req := c.req
				req.Main, req.Dest = f.Main, path.Join(f.Dir, "wt")
				err = f.Git.AddWorktree(t.Context(), req)
				is.True(err != nil) // refused
				var made *hub.WorktreeAddError
				is.True(!errors.As(err, &made)) // before any tree was made
				_, err = f.FS.Lstat(req.Dest)
				is.True(errors.Is(err, fs.ErrNotExist)) // no folder is left
				after, err := f.Git.ListWorktrees(t.Context(), f.Main)
				is.NoErr(err)
				is.Equal(after, before) // nor a tree
				local2, remote2, err := f.Git.Refs(t.Context(), f.Main)
				is.NoErr(err)
				is.Equal(local2, local)   // nor a branch
				is.Equal(remote2, remote) // nor a remote one
			})
		}
	})

	t.Run("AnExistingDestinationIsRefused", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		dest := path.Join(f.Dir, "wt")
		is.NoErr(f.FS.Mkdir(dest))
		err := f.Git.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
		is.True(err != nil) // refused
		entries, err := f.FS.ReadDir(dest)
		is.NoErr(err)
		is.Equal(len(entries), 0) // the folder is left as it was
		local, _, err := f.Git.Refs(t.Context(), f.Main)
		is.NoErr(err)
		is.True(!slices.Contains(local, "wt")) // and no branch was made
	})

	t.Run("AStampIsExclusiveAndGoesWithItsTree", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		dest := path.Join(f.Dir, "wt")
		gitDir := addTree(t, f, hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
		stamp, err := f.Git.ReadStamp(t.Context(), gitDir)
		is.NoErr(err)
		is.Equal(stamp, "") // a new tree has none
		const token = "wharf-checkout-4b1f7c2e-9a1d-4c55-8e0b-1f2a3b4c5d6e"
		is.NoErr(f.Git.WriteStamp(t.Context(), gitDir, token)) // stamped
		stamp, err = f.Git.ReadStamp(t.Context(), gitDir)
		is.NoErr(err)
		is.Equal(stamp, token) // read back
		err = f.Git.WriteStamp(t.Context(), gitDir, "wharf-checkout-other")
		is.True(errors.Is(err, fs.ErrExist)) // a second stamp is refused
		stamp, err = f.Git.ReadStamp(t.Context(), gitDir)
		is.NoErr(err)
		is.Equal(stamp, token) // and the first kept

		is.NoErr(f.Git.RemoveWorktree(t.Context(), f.Main, dest, false)) // removed
		again := addTree(t, f, hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.ExistingLocal, Branch: "wt"})
		is.Equal(again, gitDir) // git reuses the place
		stamp, err = f.Git.ReadStamp(t.Context(), again)
		is.NoErr(err)
		is.Equal(stamp, "") // but not the stamp
	})

	t.Run("ChangesNeedForceAndTheBranchStays", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		dest := path.Join(f.Dir, "wt")
		addTree(t, f, hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
		f.Untracked(t, dest)
		facts, err := f.Git.InspectTree(t.Context(), dest)
		is.NoErr(err)
		is.Equal(facts.Entries, []hub.StatusEntry{{Code: "??", Path: "untracked.txt"}}) // the untracked file
		is.True(f.Git.RemoveWorktree(t.Context(), f.Main, dest, false) != nil)          // keeps the tree without force
		_, err = f.FS.Lstat(path.Join(dest, "untracked.txt"))
		is.NoErr(err) // with the file
		l, err := f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(len(l.Entries), 2)                                     // listed still
		is.NoErr(f.Git.RemoveWorktree(t.Context(), f.Main, dest, true)) // with force it goes
		_, err = f.FS.Lstat(dest)
		is.True(errors.Is(err, fs.ErrNotExist)) // folder and all
		l, err = f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(len(l.Entries), 1) // no longer listed
		local, _, err := f.Git.Refs(t.Context(), f.Main)
		is.NoErr(err)
		is.True(slices.Contains(local, "wt")) // its branch stays
	})

	t.Run("ALockedTreeIsListedAndStaysWithForce", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		dest := path.Join(f.Dir, "wt")
		addTree(t, f, hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
		f.Lock(t, dest)
		l, err := f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)
		is.True(l.Entries[1].Locked)                                          // listed as locked
		is.True(f.Git.RemoveWorktree(t.Context(), f.Main, dest, true) != nil) // one force does not remove it
		_, err = f.FS.Lstat(dest)
		is.NoErr(err) // it stays
	})

	t.Run("ATreeRemovedBehindGitsBackIsPrunable", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		dest := path.Join(f.Dir, "wt")
		addTree(t, f, hub.AddWorktreeRequest{Main: f.Main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
		f.Vanish(t, dest)
		l, err := f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(len(l.Entries), 2)    // still listed
		is.True(l.Entries[1].Prunable) // as prunable
		is.True(!l.Entries[0].Prunable)
	})

	t.Run("TheMainCheckoutIsNeverRemoved", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		is.True(f.Git.RemoveWorktree(t.Context(), f.Main, f.Main, true) != nil) // refused
		l, err := f.Git.ListWorktrees(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(l.Entries[0].Path, f.Main) // still there
	})

	t.Run("AFetchBringsTheRemotesNewBranches", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		f.Push(t, "fresh")
		is.NoErr(f.Git.Fetch(t.Context(), f.Main, hub.SessionCredentials{})) // fetched
		_, remote, err := f.Git.Refs(t.Context(), f.Main)
		is.NoErr(err)
		is.Equal(remote, []string{"origin/feature", "origin/fresh", "origin/main"}) // with the new branch
	})

	t.Run("AnUnreachableRemoteIsTheNetwork", func(t *testing.T) {
		is := is.New(t)
		f := newFixture(t)
		f.BreakRemote(t)
		err := f.Git.Fetch(t.Context(), f.Main, hub.SessionCredentials{})
		var fe *hub.FetchError
		is.True(errors.As(err, &fe)) // git ran and failed
		is.True(!fe.Authentication)  // not for credentials
	})
}

// addTree makes the tree req asks for and returns its git directory.
func addTree(t *testing.T, f WorktreeFixture, req hub.AddWorktreeRequest) string {
	t.Helper()
	if err := f.Git.AddWorktree(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	l, err := f.Git.ListWorktrees(t.Context(), req.Main)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.Path == req.Dest {
			return e.GitDir
		}
	}
	t.Fatalf("%s is not listed after it was made", req.Dest)
	return ""
}
