package gitcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// realGit runs git to set a scene up, with env.
func realGit(t testing.TB, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sceneEnv is an environment for real git with its own user config.
func sceneEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	cfg := "[init]\n\tdefaultBranch = main\n[user]\n\tname = T\n\temail = t@example.com\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
}

// TestALinkedWorktreeIsReadThroughTheShadow: in a linked worktree, git
// reads its own HEAD and index from its git directory and the shared refs
// through the shadow, and its config.worktree joins the kept settings
// without its programs.
func TestALinkedWorktreeIsReadThroughTheShadow(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	is := is.New(t)
	env := sceneEnv(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	is.NoErr(err) // a canonical directory
	top, wt := filepath.Join(dir, "main"), filepath.Join(dir, "wt")
	realGit(t, env, dir, "init", "-q", top)
	is.NoErr(os.WriteFile(filepath.Join(top, "a.md"), []byte("a\n"), 0o644))
	is.NoErr(os.WriteFile(filepath.Join(top, ".gitattributes"), []byte("* filter=x\n"), 0o644))
	realGit(t, env, top, "add", ".")
	realGit(t, env, top, "commit", "-q", "-m", "first")
	realGit(t, env, top, "worktree", "add", "-q", "-b", "topic", wt)
	realGit(t, env, top, "config", "extensions.worktreeConfig", "true")
	marker := filepath.Join(dir, "ran")
	realGit(t, env, wt, "config", "--worktree", "filter.x.clean", "sh -c ': >> "+marker+"'")
	realGit(t, env, wt, "config", "--worktree", "core.fileMode", "false")
	is.NoErr(os.WriteFile(filepath.Join(wt, "a.md"), []byte("b\n"), 0o644))
	is.NoErr(os.Chmod(filepath.Join(wt, "a.md"), 0o755))

	r := gitcmd.New(gitcmd.Options{Env: env, ShadowDir: t.TempDir()})
	repo, _, err := r.Discover(testContext(t), wt)
	is.NoErr(err)                                                        // found
	is.Equal(repo.CommonDir, filepath.Join(top, ".git"))                 // the shared git directory
	is.Equal(repo.GitDir, filepath.Join(top, ".git", "worktrees", "wt")) // and the worktree's own
	res, err := r.RunIn(testContext(t), repo, "", "symbolic-ref", "HEAD")
	is.NoErr(err)                                      // ran
	is.Equal(string(res.Stdout), "refs/heads/topic\n") // the worktree's own HEAD
	res, err = r.RunIn(testContext(t), repo, "", "status", "--porcelain=v2", "--branch")
	is.NoErr(err)                                                                    // ran
	is.True(strings.Contains(string(res.Stdout), "# branch.head topic\n"))           // on its branch
	is.True(strings.Contains(string(res.Stdout), "1 .M N... 100644 100644 100644 ")) // a.md changed, its mode ignored (core.fileMode from config.worktree)
	_, err = os.Stat(marker)
	is.True(os.IsNotExist(err)) // and config.worktree's filter never ran
}

// BenchmarkRunIn measures what the shadow costs a command: the same
// `git status` run directly and through RunIn.
func BenchmarkRunIn(b *testing.B) {
	env := sceneEnv(b)
	top := b.TempDir()
	realGit(b, env, top, "init", "-q")
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(top, "f"+string(rune('a'+i))), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	realGit(b, env, top, "add", ".")
	realGit(b, env, top, "commit", "-q", "-m", "c")
	r := gitcmd.New(gitcmd.Options{Env: env, ShadowDir: b.TempDir(), Args: []string{"--no-optional-locks"}})
	repo, _, err := r.Discover(b.Context(), top)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain git status", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "-C", top, "--no-optional-locks", "status", "--porcelain=v2")
			cmd.Env = env
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RunIn status", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.RunIn(b.Context(), repo, "", "status", "--porcelain=v2"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
