package hostop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// runGit runs git in dir with home's configuration, failing the test on
// an error.
func runGit(t *testing.T, home, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// The worktree family on a host keeps the port's contract: a main
// checkout cloned from a bare remote with "main" and "feature", and a
// local "topic", as the contract's fixture says, served over a process.
func TestTheClientKeepsTheWorktreeContractOverAProcess(t *testing.T) {
	home := gitHome(t)
	c := newClient(t, subprocess(t, home)) // one server for every case, as a host has
	porttest.GitWorktrees(t, func(t *testing.T) porttest.WorktreeFixture {
		root := tempDir(t)
		remote := filepath.Join(root, "origin.git")
		seed := filepath.Join(root, "seed")
		runGit(t, home, root, "init", "-q", "--bare", remote)
		runGit(t, home, root, "init", "-q", seed)
		runGit(t, home, seed, "commit", "-q", "--allow-empty", "-m", "first")
		runGit(t, home, seed, "push", "-q", remote, "main", "main:feature")
		main := filepath.Join(root, "main")
		runGit(t, home, root, "clone", "-q", remote, main)
		runGit(t, home, main, "branch", "topic")
		return porttest.WorktreeFixture{Git: c, FS: c, Main: main, Dir: tempDir(t),
			Untracked: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("new\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			Lock: func(t *testing.T, dir string) { runGit(t, home, main, "worktree", "lock", dir) },
			Vanish: func(t *testing.T, dir string) {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			},
			Push: func(t *testing.T, name string) { runGit(t, home, remote, "branch", name, "main") },
			BreakRemote: func(t *testing.T) {
				runGit(t, home, main, "remote", "set-url", "origin", filepath.Join(tempDir(t), "gone.git"))
			},
		}
	})
}

// A Fetch that would be lent credentials is refused before it reaches
// the host by a client that cannot lend them (no Options.Lend).
func TestAFetchLentCredentialsIsRefusedByAClientThatCannotLend(t *testing.T) {
	is := is.New(t)
	home := gitHome(t)
	git := gitexec.New(gitexec.Options{Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}})
	c := newClient(t, pipeServer(t, osfs.FS{}, git, nil))
	err := c.Fetch(t.Context(), tempDir(t), hub.SessionCredentials{Signing: &hub.SessionSigning{}})
	is.Equal(hub.KindOf(err), hub.Invalid)                                              // refused
	is.True(strings.Contains(hub.MessageOf(err), "not supported: fetch in a terminal")) // saying what to do instead
}
