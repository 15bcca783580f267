package gitcmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd/gitcmdtest"
)

// TestWorktreeCommandsRunNoProgramARepositoryNames: the two worktree
// commands that read the repository's config themselves run none of its
// programs, where git on its own runs its hooks.
func TestWorktreeCommandsRunNoProgramARepositoryNames(t *testing.T) {
	s := gitcmdtest.New(t)
	r := gitcmd.New(gitcmd.Options{Env: s.Env, ShadowDir: t.TempDir()})
	dir := filepath.Dir(s.Top)
	for _, c := range []struct {
		name string
		w    gitcmd.NewWorktree
	}{
		{"a new branch", gitcmd.NewWorktree{Dest: filepath.Join(dir, "wt-new"), Branch: "wt-new", Start: "refs/heads/main"}},
		{"a tracking branch", gitcmd.NewWorktree{Dest: filepath.Join(dir, "wt-track"), Branch: "wt-track", Track: true, Start: "refs/remotes/origin/main"}},
		{"an existing branch", gitcmd.NewWorktree{Dest: filepath.Join(dir, "wt-old"), Start: "wt-new"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			if c.w.Branch == "" { // the existing branch is free again
				s.RawGit(t, s.Top, "worktree", "remove", "--force", filepath.Join(dir, "wt-new"))
				s.Ran(t)
			}
			s.Stale(t)
			res, err := r.AddWorktree(testContext(t), s.Top, c.w)
			is.NoErr(err)                     // ran
			is.Equal(res.Code, 0)             // and made the tree
			is.Equal(s.Ran(t), []string(nil)) // running nothing of the repository's
			b, err := os.ReadFile(filepath.Join(c.w.Dest, ".git"))
			is.NoErr(err)
			is.True(strings.HasPrefix(string(b), "gitdir: "+filepath.Join(s.GitDir(), "worktrees")+"/")) // recording the real git directory
			entries, err := os.ReadDir(c.w.Dest)
			is.NoErr(err)
			is.Equal(len(entries), 1) // and checking nothing out
		})
	}
	t.Run("listing", func(t *testing.T) {
		is := is.New(t)
		res, err := r.ListWorktrees(testContext(t), s.Top, 0)
		is.NoErr(err)                                                            // ran
		is.True(strings.HasPrefix(string(res.Stdout), "worktree "+s.Top+"\x00")) // the main checkout first, at its path
		is.Equal(s.Ran(t), []string(nil))                                        // running nothing
	})
	t.Run("git on its own runs the repository's hooks", func(t *testing.T) {
		is := is.New(t)
		s.RawGit(t, s.Top, "worktree", "add", "--no-checkout", "-b", "control", filepath.Join(dir, "control"), "main")
		is.True(strings.Contains(strings.Join(s.Ran(t), " "), "core.hooksPath")) // the scene tempts the command
	})
}

// TestAddWorktreeTakesNoOption: AddWorktree builds its own command line;
// a name that git would read as an option is refused before git runs.
func TestAddWorktreeTakesNoOption(t *testing.T) {
	r := gitcmd.New(gitcmd.Options{Git: fakeGit(t, "exit 0"), Env: []string{"PATH=" + os.Getenv("PATH")}})
	for _, w := range []gitcmd.NewWorktree{
		{Dest: "/d", Start: "--force"},
		{Dest: "/d", Branch: "-B", Start: "main"},
		{Dest: "/d", Start: ""},
		{Dest: "relative", Start: "main"},
		{Dest: "/d", Start: "main", Track: true},
		{Dest: "/d\nx", Start: "main"},
	} {
		is := is.New(t)
		_, err := r.AddWorktree(testContext(t), "/main", w)
		is.True(errors.Is(err, gitcmd.ErrRefused)) // refused
	}
	_, err := r.ListWorktrees(testContext(t), "relative", 0)
	is.New(t).True(errors.Is(err, gitcmd.ErrRefused)) // a relative folder is no repository
}
