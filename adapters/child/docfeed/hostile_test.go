package docfeed

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd/gitcmdtest"
)

// TestAWorkspaceWhoseConfigNamesProgramsRunsNone opens the document feed
// on a repository whose config names a program in every place git runs
// one from (a clean filter over every file, each file's mtime off the
// index's, an fsmonitor hook, a signed HEAD, a submodule with its own
// filter, included files...) and reads it through both compare targets:
// every git command the feed has runs, and none of the programs.
func TestAWorkspaceWhoseConfigNamesProgramsRunsNone(t *testing.T) {
	is := is.New(t)
	s := gitcmdtest.New(t)
	opts := fastOptions(t, s.Env)
	opts.Git = s.Git
	f, stop := startFeed(t, s.Top, opts)
	for _, target := range []string{"last-commit", "base"} {
		c := subscribe(t, f, "compareTarget="+target)
		c.ready()
		read := func() bool { return c.repoState.Status == repoReady || c.repoState.Status == repoError }
		if !read() {
			c.until("the repository read", func(frame) bool { return read() })
		}
		is.Equal(s.Ran(t), []string(nil))       // no program of the repository's config ran
		is.Equal(c.repoState.Status, repoReady) // and the repository was read
		is.Equal(len(c.repos), 1)               // whole
	}
	is.NoErr(stop()) // the feed ended

	ran := strings.Join(s.Commands(t), "\n")
	for _, c := range []string{" rev-parse ", " ls-files ", " status ", " log ", " diff ", " for-each-ref ", " merge-base ", " --raw "} {
		is.True(strings.Contains(ran, c)) // every command the feed has ran
	}
}
