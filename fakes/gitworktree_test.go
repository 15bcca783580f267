package fakes_test

import (
	"errors"
	"path"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// newWorktreeFixture is the fake's worktree contract fixture: a
// repository at /work/main and a folder for trees at /trees.
func newWorktreeFixture(t *testing.T) porttest.WorktreeFixture {
	f := fakes.NewFS("/home/ann")
	f.MkdirAll("/work/main")
	f.MkdirAll("/trees")
	g := fakes.NewGit(f)
	if err := g.Init(t.Context(), "/work/main"); err != nil {
		t.Fatal(err)
	}
	g.SetRefs("/work/main", []string{"main", "topic"}, []string{"origin/feature", "origin/main"})
	return porttest.WorktreeFixture{Git: g, FS: f, Main: "/work/main", Dir: "/trees",
		Untracked: func(t *testing.T, dir string) {
			if err := f.WriteFile(path.Join(dir, "untracked.txt")); err != nil {
				t.Fatal(err)
			}
			g.SetTreeFacts(dir, hub.TreeFacts{Entries: []hub.StatusEntry{{Code: "??", Path: "untracked.txt"}}})
		},
		Lock: func(t *testing.T, dir string) { g.LockWorktree(dir) },
		Vanish: func(t *testing.T, dir string) {
			if err := f.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		},
		Push: func(t *testing.T, name string) { g.PushRemote("/work/main", "origin/"+name) },
		BreakRemote: func(t *testing.T) {
			g.FailNext(fakes.GitFetch, &hub.FetchError{Err: errors.New("connection refused")})
		},
	}
}

func TestGitWorktrees(t *testing.T) {
	porttest.GitWorktrees(t, newWorktreeFixture)
}

// TestAFakeLinkedTreeIsInspectedAsACheckout: the registry inspects the
// trees the fake makes as git would.
func TestAFakeLinkedTreeIsInspectedAsACheckout(t *testing.T) {
	is := is.New(t)
	fx := newWorktreeFixture(t)
	g := fx.Git.(*fakes.Git)
	is.NoErr(g.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: fx.Main, Dest: "/trees/wt", Mode: hub.NewBranch, Branch: "wt", Base: "main"}))
	repo, err := g.Inspect(t.Context(), "/trees/wt")
	is.NoErr(err)
	is.Equal(repo, hub.Repository{TopLevel: "/trees/wt", CommonDir: "/work/main/.git", Branch: "wt"}) // its own top, the family's git directory
	g.FailNext(fakes.GitAddWorktree, hub.Errorf(hub.Internal, "no git"))
	err = g.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: fx.Main, Dest: "/trees/x", Mode: hub.ExistingLocal, Branch: "topic"})
	is.Equal(hub.MessageOf(err), "no git")     // a scripted failure
	is.Equal(g.Calls(fakes.GitAddWorktree), 2) // counted
	_, err = fx.FS.Lstat("/trees/x")
	is.True(err != nil) // that made nothing
}
