package gitexec_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes/porttest"
)

// worktreeScene is a repository cloned from a bare remote that has
// "main" and "feature", with a local branch "topic": the contract's
// fixture, and the base of the worktree tests.
type worktreeScene struct {
	env          []string
	remote, main string
	dir          string // an empty canonical folder for trees
}

func newWorktreeScene(t *testing.T) worktreeScene {
	env := testEnv(t)
	root := tempDir(t)
	remote := bareRepo(t, env, root, "origin.git")
	git(t, env, remote, "branch", "feature", "main")
	main := filepath.Join(root, "main")
	git(t, env, root, "clone", "--quiet", remote, main)
	git(t, env, main, "branch", "topic")
	return worktreeScene{env: env, remote: remote, main: main, dir: tempDir(t)}
}

func TestWorktreeContract(t *testing.T) {
	porttest.GitWorktrees(t, func(t *testing.T) porttest.WorktreeFixture {
		s := newWorktreeScene(t)
		r := newCloneRunner(t, s.env, runtimeDir(t), "")
		return porttest.WorktreeFixture{Git: r, FS: osfs.FS{}, Main: s.main, Dir: s.dir,
			Untracked: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "untracked.txt"), "new\n") },
			Lock:      func(t *testing.T, dir string) { git(t, s.env, s.main, "worktree", "lock", dir) },
			Vanish: func(t *testing.T, dir string) {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			},
			Push: func(t *testing.T, name string) { git(t, s.env, s.remote, "branch", name, "main") },
			BreakRemote: func(t *testing.T) {
				git(t, s.env, s.main, "remote", "set-url", "origin", filepath.Join(tempDir(t), "gone.git"))
			},
		}
	})
}

// A tree whose making was cut between `worktree add --no-checkout` and
// its checkout (a Hub killed there) holds no files and shows every
// tracked file deleted, and the lock git holds on a tree it is making;
// CheckOutWorktree completes it.
func TestCheckOutWorktreeCompletesATreeMadeWithoutItsCheckout(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	main := newRepo(t, env)
	is.NoErr(os.WriteFile(filepath.Join(main, "a.txt"), []byte("a\n"), 0o644))
	git(t, env, main, "add", "a.txt")
	git(t, env, main, "commit", "-q", "-m", "a")
	tree := filepath.Join(tempDir(t), "cut")
	git(t, env, main, "worktree", "add", "-q", "--no-checkout", "-b", "cut", tree, "HEAD")
	r := newRunner(t, env)
	facts, err := r.InspectTree(t.Context(), tree)
	is.NoErr(err)
	is.True(len(facts.Entries) > 0) // every tracked file shows deleted
	l, err := r.ListWorktrees(t.Context(), main)
	is.NoErr(err)
	is.NoErr(os.WriteFile(filepath.Join(l.Entries[1].GitDir, "locked"), []byte("initializing"), 0o644)) // the lock git holds while it makes a tree
	is.NoErr(r.CheckOutWorktree(t.Context(), tree))
	l, err = r.ListWorktrees(t.Context(), main)
	is.NoErr(err)
	is.True(!l.Entries[1].Locked) // unlocked
	b, err := os.ReadFile(filepath.Join(tree, "a.txt"))
	is.NoErr(err)
	is.Equal(string(b), "a\n") // the files are there
	facts, err = r.InspectTree(t.Context(), tree)
	is.NoErr(err)
	is.Equal(len(facts.Entries), 0) // and nothing is changed
}

// A tree cut before git wrote its HEAD is no repository yet, and git
// refuses to remove it; DiscardWorktree removes it when its folder holds
// its .git file alone, and keeps it otherwise.
func TestDiscardWorktreeRemovesATreeGitNeverFinished(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	main := newRepo(t, env)
	r := newRunner(t, env)
	cut := func(name string) (string, string) {
		tree := filepath.Join(tempDir(t), name)
		git(t, env, main, "worktree", "add", "-q", "--no-checkout", "-b", name, tree, "HEAD")
		l, err := r.ListWorktrees(t.Context(), main)
		is.NoErr(err)
		gitDir := l.Entries[len(l.Entries)-1].GitDir
		is.NoErr(os.Remove(filepath.Join(gitDir, "HEAD"))) // git was killed before it wrote HEAD
		return tree, gitDir
	}
	tree, gitDir := cut("cut")
	is.True(r.RemoveWorktree(t.Context(), main, tree, true) != nil) // git refuses it
	is.NoErr(r.DiscardWorktree(t.Context(), main, tree))            // discarded
	for _, p := range []string{tree, gitDir} {
		_, err := os.Lstat(p)
		is.True(errors.Is(err, fs.ErrNotExist)) // folder and git directory gone
	}

	tree, gitDir = cut("kept")
	is.NoErr(os.WriteFile(filepath.Join(tree, "mine.txt"), []byte("x"), 0o644))
	is.True(r.DiscardWorktree(t.Context(), main, tree) != nil) // a folder holding files is kept
	_, err := os.Stat(filepath.Join(tree, "mine.txt"))
	is.NoErr(err)
	_, err = os.Stat(gitDir)
	is.NoErr(err)
}
