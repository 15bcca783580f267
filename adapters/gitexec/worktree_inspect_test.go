package gitexec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// addTree makes a linked tree "wt" of s's repository on a new branch
// "wt" with r, and returns its folder and git directory.
func (s worktreeScene) addTree(t *testing.T, name string) (dir, gitDir string) {
	t.Helper()
	r := newRunner(t, s.env)
	dir = filepath.Join(s.dir, name)
	if err := r.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: s.main, Dest: dir, Mode: hub.NewBranch, Branch: name, Base: "main"}); err != nil {
		t.Fatal(err)
	}
	return dir, git(t, s.env, dir, "rev-parse", "--absolute-git-dir")
}

func TestInspectTreeFindsWhatDeletingTheTreeWouldMeet(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s worktreeScene, dir, gitDir string)
		want  hub.TreeFacts
	}{
		{"a clean tree", func(*testing.T, worktreeScene, string, string) {}, hub.TreeFacts{}},
		{"a held index.lock", func(t *testing.T, _ worktreeScene, _, gitDir string) {
			write(t, filepath.Join(gitDir, "index.lock"), "")
		}, hub.TreeFacts{InProgress: "index.lock"}},
		{"a merge in progress", func(t *testing.T, s worktreeScene, dir, _ string) {
			next := git(t, s.env, dir, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "next")
			git(t, s.env, dir, "merge", "--quiet", "--no-ff", "--no-commit", next)
		}, hub.TreeFacts{InProgress: "MERGE_HEAD"}},
		{"the first of several operations", func(t *testing.T, _ worktreeScene, _, gitDir string) {
			is.New(t).NoErr(os.Mkdir(filepath.Join(gitDir, "sequencer"), 0o755))
			write(t, filepath.Join(gitDir, "BISECT_START"), "main\n")
			write(t, filepath.Join(gitDir, "REVERT_HEAD"), "x\n")
		}, hub.TreeFacts{InProgress: "REVERT_HEAD"}},
		{"a change, an untracked file and an ignored build folder", func(t *testing.T, _ worktreeScene, dir, _ string) {
			write(t, filepath.Join(dir, "README.md"), "changed\n")
			write(t, filepath.Join(dir, ".gitignore"), "build/\n")
			is.New(t).NoErr(os.MkdirAll(filepath.Join(dir, "build", "obj"), 0o755))
			write(t, filepath.Join(dir, "build", "obj", "a.o"), "")
			is.New(t).NoErr(os.MkdirAll(filepath.Join(dir, "notes", "deep"), 0o755))
			write(t, filepath.Join(dir, "notes", "deep", "n.md"), "")
		}, hub.TreeFacts{Entries: []hub.StatusEntry{{Code: " M", Path: "README.md"}, {Code: "??", Path: ".gitignore"},
			{Code: "??", Path: "notes/deep/n.md"}, {Code: "!!", Path: "build/"}}}},
		{"a repository cloned into it", func(t *testing.T, s worktreeScene, dir, _ string) {
			git(t, s.env, dir, "clone", "--quiet", s.remote, "vendor/lib")
		}, hub.TreeFacts{NestedRepository: "vendor/lib", Entries: []hub.StatusEntry{{Code: "??", Path: "vendor/lib/"}}}},
		{"a bare repository in an untracked folder", func(t *testing.T, s worktreeScene, dir, _ string) {
			git(t, s.env, dir, "init", "--quiet", "--bare", "stuff/x.git")
		}, hub.TreeFacts{NestedRepository: "stuff/x.git"}},
		{"a linked tree's git directory", func(t *testing.T, _ worktreeScene, dir, _ string) {
			is.New(t).NoErr(os.MkdirAll(filepath.Join(dir, "odd"), 0o755))
			write(t, filepath.Join(dir, "odd", "gitdir"), "/elsewhere/.git\n")
		}, hub.TreeFacts{NestedRepository: "odd", Entries: []hub.StatusEntry{{Code: "??", Path: "odd/gitdir"}}}},
		{"an initialized submodule", func(t *testing.T, s worktreeScene, dir, _ string) {
			git(t, s.env, dir, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", s.remote, "sub")
		}, hub.TreeFacts{Submodules: true, NestedRepository: "sub", Entries: []hub.StatusEntry{{Code: "A ", Path: ".gitmodules"}, {Code: "A ", Path: "sub"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newWorktreeScene(t)
			dir, gitDir := s.addTree(t, "wt")
			c.setup(t, s, dir, gitDir)
			facts, err := newRunner(t, s.env).InspectTree(t.Context(), dir)
			is.NoErr(err)
			if c.want.Entries == nil && facts.Entries != nil && c.want.NestedRepository == "stuff/x.git" {
				c.want.Entries = facts.Entries // the bare repository's files, as git lists them
				is.True(strings.HasPrefix(facts.Entries[0].Path, "stuff/x.git/"))
			}
			is.Equal(facts, c.want) // what git and the folders say
		})
	}
}

// TestInspectTreeWritesNothing: the inspection takes no lock and
// refreshes no index, even of a tree whose files all look changed.
func TestInspectTreeWritesNothing(t *testing.T) {
	is := is.New(t)
	s := newWorktreeScene(t)
	dir, gitDir := s.addTree(t, "wt")
	before, err := os.Stat(filepath.Join(gitDir, "index"))
	is.NoErr(err)
	write(t, filepath.Join(dir, "README.md"), "hello\n") // the same content, a new time
	facts, err := newRunner(t, s.env).InspectTree(t.Context(), dir)
	is.NoErr(err)
	is.Equal(facts, hub.TreeFacts{}) // unchanged
	after, err := os.Stat(filepath.Join(gitDir, "index"))
	is.NoErr(err)
	is.Equal(after.ModTime(), before.ModTime()) // and the index was not rewritten
}

func TestInspectTreeRefusesWhatItCannotReport(t *testing.T) {
	t.Run("a path that is not UTF-8", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		dir, _ := s.addTree(t, "wt")
		write(t, filepath.Join(dir, "caf\xe9.txt"), "")
		_, err := newRunner(t, s.env).InspectTree(t.Context(), dir)
		is.True(err != nil) // refused
	})
	t.Run("a folder below a tree's top", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		dir, _ := s.addTree(t, "wt")
		sub := filepath.Join(dir, "sub")
		is.NoErr(os.Mkdir(sub, 0o755))
		_, err := newRunner(t, s.env).InspectTree(t.Context(), sub)
		is.Equal(hub.KindOf(err), hub.Invalid) // refused: it is no tree
	})
}
