package gitexec_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd/gitcmdtest"
)

// TestTheHubRunsNoProgramAFolderConfigNames runs every git operation of
// the Hub's GitRunner in a repository whose config names a program in
// every place git runs one from: none runs.
func TestTheHubRunsNoProgramAFolderConfigNames(t *testing.T) {
	is := is.New(t)
	s := gitcmdtest.New(t)
	r := gitexec.New(gitexec.Options{Git: s.Git, Env: s.Env, MaxAge: -1})
	repo, err := r.Inspect(t.Context(), s.Top)
	is.NoErr(err)                        // inspected
	is.Equal(repo.TopLevel, s.Top)       // the repository
	is.Equal(repo.Branch, "main")        // and its branch
	is.NoErr(r.Init(t.Context(), s.Top)) // re-initialized
	is.Equal(s.Ran(t), []string(nil))    // and no program of its config ran

	ran := strings.Join(s.Commands(t), "\n")
	for _, c := range []string{" rev-parse ", " symbolic-ref ", " init "} {
		is.True(strings.Contains(ran, c)) // every kind of command the runner has ran
	}
}
