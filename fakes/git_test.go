package fakes_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestGit(t *testing.T) {
	porttest.Git(t, func(*testing.T) (hub.GitRunner, hub.FS, string) {
		f := fakes.NewFS("/home/ann")
		f.MkdirAll("/work")
		return fakes.NewGit(f), f, "/work"
	})
}

// newRepo returns a fake FS holding a repository at /work/repo.
func newRepo(t *testing.T) (*fakes.FS, *fakes.Git) {
	t.Helper()
	f := fakes.NewFS("/home/ann")
	f.MkdirAll("/work/repo")
	g := fakes.NewGit(f)
	if err := g.Init(t.Context(), "/work/repo"); err != nil {
		t.Fatal(err)
	}
	return f, g
}

func TestGitSetBranch(t *testing.T) {
	for _, branch := range []string{"feature/x", ""} {
		t.Run("branch="+branch, func(t *testing.T) {
			is := is.New(t)
			f, g := newRepo(t)
			f.MkdirAll("/work/repo/sub")
			g.SetBranch("/work/repo/", branch)
			repo, err := g.Inspect(t.Context(), "/work/repo/sub")
			is.NoErr(err)
			is.Equal(repo.Branch, branch) // the recorded branch, "" for detached
		})
	}
}

func TestGitFailNext(t *testing.T) {
	boom := errors.New("boom")
	t.Run("inspect", func(t *testing.T) {
		is := is.New(t)
		_, g := newRepo(t)
		g.FailNext(fakes.GitInspect, boom)
		_, err := g.Inspect(t.Context(), "/work/repo")
		is.Equal(err, boom) // the scripted error, as given
		repo, err := g.Inspect(t.Context(), "/work/repo")
		is.NoErr(err)                          // only the next call fails
		is.Equal(repo.TopLevel, "/work/repo")  // and the repository is intact
		is.Equal(g.Calls(fakes.GitInspect), 2) // failed calls count
	})
	t.Run("init", func(t *testing.T) {
		is := is.New(t)
		f := fakes.NewFS("/home/ann")
		f.MkdirAll("/work")
		g := fakes.NewGit(f)
		g.FailNext(fakes.GitInit, boom)
		g.FailNext(fakes.GitInit, boom)
		is.Equal(g.Init(t.Context(), "/work"), boom) // first queued failure
		is.Equal(g.Init(t.Context(), "/work"), boom) // second queued failure
		_, err := f.Lstat("/work/.git")
		is.True(errors.Is(err, fs.ErrNotExist)) // nothing created
		is.NoErr(g.Init(t.Context(), "/work"))  // then it works
		is.Equal(g.Calls(fakes.GitInit), 3)     // every call counted
		is.Equal(g.Calls(fakes.GitInspect), 0)  // per op
	})
}

func TestGitInitThroughFSBefore(t *testing.T) {
	is := is.New(t)
	f := fakes.NewFS("/home/ann")
	f.MkdirAll("/work")
	crash := errors.New("crash")
	f.Before = func(op, p string) error {
		if op == "mkdir" && p == "/work/.git" {
			return crash
		}
		return nil
	}
	g := fakes.NewGit(f)
	err := g.Init(t.Context(), "/work")
	is.True(errors.Is(err, crash)) // a crash injected in the FS fails Init
	repo, err := g.Inspect(t.Context(), "/work")
	is.NoErr(err)
	is.Equal(repo, hub.Repository{}) // and leaves no repository
}

func TestGitInspectEdges(t *testing.T) {
	t.Run("dot git file", func(t *testing.T) {
		is := is.New(t)
		f := fakes.NewFS("/home/ann")
		f.MkdirAll("/work/wt")
		is.NoErr(f.WriteFile("/work/wt/.git"))
		_, err := fakes.NewGit(f).Inspect(t.Context(), "/work/wt")
		is.True(err != nil)                     // a linked worktree is beyond the fake: unknown
		is.Equal(hub.KindOf(err), hub.Internal) // reported as an internal failure
	})
	t.Run("symlinked dir", func(t *testing.T) {
		is := is.New(t)
		f, g := newRepo(t)
		is.NoErr(f.Symlink("/work/repo", "/work/link"))
		repo, err := g.Inspect(t.Context(), "/work/link")
		is.NoErr(err)
		is.Equal(repo.TopLevel, "/work/repo") // physical path, as git reports it
	})
	t.Run("file", func(t *testing.T) {
		is := is.New(t)
		f, g := newRepo(t)
		is.NoErr(f.WriteFile("/work/repo/file"))
		_, err := g.Inspect(t.Context(), "/work/repo/file")
		is.Equal(hub.KindOf(err), hub.Invalid)                                    // not a folder
		is.Equal(hub.KindOf(g.Init(t.Context(), "/work/repo/file")), hub.Invalid) // Init likewise
	})
	t.Run("missing", func(t *testing.T) {
		is := is.New(t)
		_, g := newRepo(t)
		_, err := g.Inspect(t.Context(), "/work/none")
		is.Equal(hub.KindOf(err), hub.NotFound)          // a missing folder is NotFound
		is.Equal(hub.MessageOf(err), "folder not found") // without the path
	})
}

func TestGitUnknownOpPanics(t *testing.T) {
	is := is.New(t)
	defer func() {
		is.True(recover() != nil) // a misspelled op is a test bug, caught loudly
	}()
	fakes.NewGit(fakes.NewFS("/home/ann")).Calls("clones")
}
