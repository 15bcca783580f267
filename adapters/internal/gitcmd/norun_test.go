package gitcmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd/gitcmdtest"
)

// wharfCommands are the command lines Wharf runs in a repository today:
// the Hub's GitRunner (adapters/gitexec) and the workspace child's
// document feed (adapters/child/docfeed). Their own tests run their real
// code in the hostile scene too; this list runs them with no help from
// their own settings. armed names one program the command runs when git
// runs it as a person's own git would (the control run): the scene is
// then known to tempt that command.
var wharfCommands = []struct {
	args  []string
	armed string
}{
	{[]string{"symbolic-ref", "--quiet", "HEAD"}, ""},
	{[]string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"}, "filter.x.clean"},
	{[]string{"log", "-z", "--max-count=100", "--format=%H%x00%h%x00%an%x00%ct%x00%s%x00%b", "HEAD", "--"}, "gpg.openpgp.program"},
	{[]string{"diff", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", "HEAD", "--"}, "filter.x.clean"},
	{[]string{"diff", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", "--raw", "HEAD~2", "--"}, "filter.x.clean"},
	{[]string{"for-each-ref", "--format=%(refname)%00%(symref)", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"}, ""},
	{[]string{"merge-base", "HEAD", "refs/remotes/origin/main"}, ""},
	{[]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}, "core.fsmonitor"},
	{[]string{"ls-files", "-z", "--cached", "--others", "--exclude-standard"}, "core.fsmonitor"},
}

// comingCommands are what the families to come will run (fetch, commit,
// checkout, signatures); they inherit the rule by running through RunIn.
var comingCommands = []struct {
	args  []string
	armed string
}{
	{[]string{"log", "--show-signature", "-n", "5"}, "gpg.openpgp.program"},
	{[]string{"fetch", "origin"}, "remote.origin.url"},
	{[]string{"ls-remote", "https://example.invalid/x"}, "url.insteadOf"},
	{[]string{"update-ref", "refs/heads/wharf-test", "HEAD"}, "core.hooksPath"},
	{[]string{"commit", "-q", "--allow-empty", "-m", "x"}, "filter.x.clean"},
	{[]string{"checkout", "HEAD", "--", "a.md"}, "filter.x.smudge"},
}

func TestNoProgramARepositoryNamesRuns(t *testing.T) {
	s := gitcmdtest.New(t)
	r := gitcmd.New(gitcmd.Options{Env: s.Env, ShadowDir: t.TempDir()})
	repo, res, err := r.Discover(testContext(t), s.Top)
	t.Run("discovery", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(err)                                       // rev-parse ran
		is.Equal(res.Code, 0)                               // and found the repository
		is.Equal(repo.Top, s.Top)                           // its work tree
		is.Equal(repo.GitDir, s.GitDir())                   // its git directory
		is.Equal(repo.CommonDir, s.GitDir())                // which is the common one
		is.Equal(s.Ran(t), []string(nil))                   // and ran nothing
		_, err = r.Run(testContext(t), s.Top, "init", "-q") // re-initializing the repository
		is.NoErr(err)                                       // runs
		is.Equal(s.Ran(t), []string(nil))                   // and runs nothing either
	})
	check := func(t *testing.T, args []string, armed string) {
		is := is.New(t)
		s.Stale(t)
		res, err := r.RunIn(testContext(t), repo, "", args...)
		is.NoErr(err)                                                          // ran
		is.True(res.Code == 0 || args[0] == "fetch" || args[0] == "ls-remote") // as it should (no remote is reachable)
		is.Equal(s.Ran(t), []string(nil))                                      // and no program of the repository ran
		if armed == "" {
			return
		}
		s.Stale(t)
		s.RawGit(t, s.Top, args...)
		is.True(strings.Contains(strings.Join(s.Ran(t), " "), armed)) // where git on its own runs the repository's program
	}
	for _, c := range wharfCommands {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) { check(t, c.args, c.armed) })
	}
	for _, c := range comingCommands {
		t.Run("to come: "+strings.Join(c.args[:2], " "), func(t *testing.T) { check(t, c.args, c.armed) })
	}
	t.Run("what a command writes lands in the repository", func(t *testing.T) {
		is := is.New(t)
		res, err := r.RunIn(testContext(t), repo, "", "update-ref", "refs/heads/through-shadow", "HEAD")
		is.NoErr(err)         // ran
		is.Equal(res.Code, 0) // and wrote the ref
		_, err = os.Stat(filepath.Join(s.GitDir(), "refs", "heads", "through-shadow"))
		is.NoErr(err)                                                                                      // into the repository's refs, not the shadow's
		is.Equal(s.RawGit(t, s.Top, "rev-parse", "--verify", "-q", "through-shadow^{commit}") != "", true) // where git finds it

		res, err = r.RunIn(testContext(t), repo, "", "config", "user.name", "Through Shadow")
		is.NoErr(err)                                                                   // ran
		is.True(res.Code != 0)                                                          // but a config written into the shadow fails
		is.True(!strings.Contains(s.RawGit(t, s.Top, "config", "user.name"), "Shadow")) // rather than pass for written
	})
}

// TestARepositoryCannotEnterSubmodulesThroughOptions: the options that
// would run git in a submodule, with the submodule's own config, are
// refused, and status is kept out of submodules' work trees even though
// the scene's .gitmodules asks for ignore=none.
func TestARepositoryCannotEnterSubmodulesThroughOptions(t *testing.T) {
	s := gitcmdtest.New(t)
	r := gitcmd.New(gitcmd.Options{Env: s.Env, ShadowDir: t.TempDir()})
	repo, _, err := r.Discover(testContext(t), s.Top)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"status", "--ignore-submodules=none"},
		{"diff", "--submodule=diff"},
		{"ls-files", "--recurse-submodules"},
		{"-c", "x.y=z", "status"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			is := is.New(t)
			_, err := r.RunIn(testContext(t), repo, "", args...)
			is.True(errors.Is(err, gitcmd.ErrRefused)) // refused before git runs
		})
	}
	t.Run("status", func(t *testing.T) {
		is := is.New(t)
		s.Stale(t)
		res, err := r.RunIn(testContext(t), repo, "", "status", "--porcelain=v2")
		is.NoErr(err)                                                    // ran
		is.Equal(s.Ran(t), []string(nil))                                // without entering the submodule
		is.True(strings.Contains(string(res.Stdout), " sub\n") == false) // whose work tree it did not look at
	})
}

// TestARepositoryConfigRewrittenDuringRunsIsNeverUsed rewrites the
// repository's config in a loop, between its own and one naming a clean
// filter, while status runs again and again: git reads the shadow's copy,
// made from one read of the config before it started, so no interleaving
// lets it see the program. (Reading the config and overriding what it
// named, on the command line, lost this race in about 6% of 500 runs.)
func TestARepositoryConfigRewrittenDuringRunsIsNeverUsed(t *testing.T) {
	is := is.New(t)
	s := gitcmdtest.New(t)
	r := gitcmd.New(gitcmd.Options{Env: s.Env, ShadowDir: t.TempDir()})
	repo, _, err := r.Discover(testContext(t), s.Top)
	is.NoErr(err) // discovered
	cfg := filepath.Join(s.GitDir(), "config")
	benign := []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n")
	prog := filepath.Join(t.TempDir(), "clean")
	marker := prog + ".ran"
	fakeexec.Script(t, prog, ": >> '"+marker+"'\n")
	hostile := append(append([]byte(nil), benign...), "[filter \"x\"]\n\tclean = "+prog+"\n"...)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var rewrites int
	wg.Add(1)
	go func() {
		defer wg.Done()
		deadline := time.Now().Add(testWait)
		for i := 0; i < 1_000_000 && time.Now().Before(deadline); i++ {
			select {
			case <-stop:
				return
			default:
			}
			b := benign
			if i%2 == 1 {
				b = hostile
			}
			if err := os.WriteFile(cfg, b, 0o644); err != nil {
				t.Error(err)
				return
			}
			rewrites++
		}
	}()
	const runs = 200
	ok := 0
	for i := 0; i < runs; i++ {
		s.Stale(t)
		if res, err := r.RunIn(testContext(t), repo, "", "status", "--porcelain=v2"); err == nil && res.Code == 0 {
			ok++
		}
	}
	close(stop)
	wg.Wait()
	_, err = os.Stat(marker)
	is.True(os.IsNotExist(err)) // the program never ran
	is.True(ok > runs/2)        // while status did run (a torn config fails a run, never leaks a key)
	t.Logf("%d status runs completed, %d config rewrites meanwhile", ok, rewrites)

	is.NoErr(os.WriteFile(cfg, hostile, 0o644))
	s.Stale(t)
	s.RawGit(t, s.Top, "--no-optional-locks", "status", "--porcelain=v2")
	_, err = os.Stat(marker)
	is.NoErr(err) // control: git on its own runs it
}
