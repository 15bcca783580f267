package porttest

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// Git runs the hub.GitRunner contract. newGit returns the runner under
// test, the file system it works over, and an existing, empty, canonical
// directory in that file system that is in no repository.
func Git(t *testing.T, newGit func(t *testing.T) (hub.GitRunner, hub.FS, string)) {
	t.Run("PlainDirectoryIsNoRepository", func(t *testing.T) {
		is := is.New(t)
		g, fsys, dir := newGit(t)
		sub := path.Join(dir, "sub")
		is.NoErr(fsys.Mkdir(sub))
		for _, d := range []string{dir, sub} {
			repo, err := g.Inspect(t.Context(), d)
			is.NoErr(err)                    // a plain directory is an answer, not an error
			is.Equal(repo, hub.Repository{}) // no repository
			_, err = fsys.Lstat(path.Join(d, ".git"))
			is.True(errors.Is(err, fs.ErrNotExist)) // Inspect creates nothing
		}
	})

	t.Run("InitThenInspect", func(t *testing.T) {
		is := is.New(t)
		g, _, dir := newGit(t)
		is.NoErr(g.Init(t.Context(), dir)) // init
		repo, err := g.Inspect(t.Context(), dir)
		is.NoErr(err)
		is.Equal(repo.TopLevel, dir)                     // the top level is dir
		is.Equal(repo.CommonDir, path.Join(dir, ".git")) // the git directory inside it
		is.True(repo.Branch != "")                       // a fresh repository is on a branch
	})

	t.Run("SubdirectoryReportsTopLevel", func(t *testing.T) {
		is := is.New(t)
		g, fsys, dir := newGit(t)
		is.NoErr(g.Init(t.Context(), dir))
		deep := path.Join(dir, "a", "b")
		is.NoErr(fsys.Mkdir(path.Join(dir, "a")))
		is.NoErr(fsys.Mkdir(deep))
		repo, err := g.Inspect(t.Context(), deep)
		is.NoErr(err)
		is.Equal(repo.TopLevel, dir)                     // the enclosing checkout
		is.Equal(repo.CommonDir, path.Join(dir, ".git")) // and its git directory
	})

	t.Run("NestedRepository", func(t *testing.T) {
		is := is.New(t)
		g, fsys, dir := newGit(t)
		inner := path.Join(dir, "inner")
		is.NoErr(g.Init(t.Context(), dir))
		is.NoErr(fsys.Mkdir(inner))
		is.NoErr(g.Init(t.Context(), inner)) // a repository inside a checkout
		repo, err := g.Inspect(t.Context(), inner)
		is.NoErr(err)
		is.Equal(repo.TopLevel, inner)                     // the nearest one wins
		is.Equal(repo.CommonDir, path.Join(inner, ".git")) // with its own git directory
	})

	t.Run("InitTwiceKeepsRepository", func(t *testing.T) {
		is := is.New(t)
		g, _, dir := newGit(t)
		is.NoErr(g.Init(t.Context(), dir))
		before, err := g.Inspect(t.Context(), dir)
		is.NoErr(err)
		is.NoErr(g.Init(t.Context(), dir)) // git reinitializes without harm
		after, err := g.Inspect(t.Context(), dir)
		is.NoErr(err)
		is.Equal(after, before) // same repository, same branch
	})

	t.Run("MissingDirectoryIsError", func(t *testing.T) {
		is := is.New(t)
		g, _, dir := newGit(t)
		_, err := g.Inspect(t.Context(), path.Join(dir, "none"))
		is.True(err != nil)                     // not "no repository": there is no folder
		is.True(errors.Is(err, fs.ErrNotExist)) // recognizable as missing
	})

	t.Run("InitMissingDirectoryIsError", func(t *testing.T) {
		is := is.New(t)
		g, fsys, dir := newGit(t)
		missing := path.Join(dir, "none", "deeper")
		is.True(g.Init(t.Context(), missing) != nil) // Init never creates the folder
		_, err := fsys.Lstat(path.Join(dir, "none"))
		is.True(errors.Is(err, fs.ErrNotExist)) // nor any parent of it
	})

	t.Run("RelativePathIsError", func(t *testing.T) {
		is := is.New(t)
		g, _, _ := newGit(t)
		_, err := g.Inspect(t.Context(), "relative/dir")
		is.True(err != nil)                                 // Inspect refuses it
		is.True(g.Init(t.Context(), "relative/dir") != nil) // and so does Init
	})

	t.Run("CancelledContextIsError", func(t *testing.T) {
		is := is.New(t)
		g, fsys, dir := newGit(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		is.True(g.Init(ctx, dir) != nil) // Init honours ctx
		_, err := fsys.Lstat(path.Join(dir, ".git"))
		is.True(errors.Is(err, fs.ErrNotExist)) // and did nothing
		_, err = g.Inspect(ctx, dir)
		is.True(err != nil) // Inspect honours ctx
	})

	t.Run("ConcurrentInspect", func(t *testing.T) {
		is := is.New(t)
		g, _, dir := newGit(t)
		is.NoErr(g.Init(t.Context(), dir))
		want, err := g.Inspect(t.Context(), dir)
		is.NoErr(err)
		const n = 8
		got := make([]hub.Repository, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i], errs[i] = g.Inspect(t.Context(), dir) })
		}
		wg.Wait()
		for i := range n {
			is.NoErr(errs[i])      // concurrent calls succeed
			is.Equal(got[i], want) // and agree
		}
	})
}
