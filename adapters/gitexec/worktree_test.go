package gitexec_test

import (
	"os"
	"path/filepath"
	"testing"

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
