package docfeed

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// relativeCases are ages in seconds and Git's wording of them, at and
// around every boundary of Git's rounding.
var relativeCases = []struct {
	age  int64
	want string
}{
	{0, "0 seconds ago"},
	{1, "1 second ago"},
	{89, "89 seconds ago"},
	{90, "2 minutes ago"},
	{5369, "89 minutes ago"},
	{5370, "2 hours ago"},
	{60*60*35 + 29*60 + 29, "35 hours ago"},
	{60 * 60 * 36, "2 days ago"},
	{86400 * 13, "13 days ago"},
	{1164569, "13 days ago"},
	{1164570, "2 weeks ago"},
	{86400 * 69, "10 weeks ago"},
	{86400 * 70, "2 months ago"},
	{86400 * 364, "12 months ago"},
	{86400 * 365, "1 year ago"},
	{86400 * 380, "1 year ago"},
	{86400 * 381, "1 year, 1 month ago"},
	{86400 * 700, "1 year, 11 months ago"},
	{86400 * 730, "2 years ago"},
	{86400 * 1000, "2 years, 9 months ago"},
	{86400 * 1824, "5 years ago"},
	{86400 * 1825, "5 years ago"},
	{86400 * 3650, "10 years ago"},
}

func TestRelativeTime(t *testing.T) {
	t.Parallel()
	now := time.Unix(2_000_000_000, 0)
	for _, tc := range relativeCases {
		t.Run(fmt.Sprint(tc.age), func(t *testing.T) {
			is := is.New(t)
			is.Equal(RelativeTime(now.Add(-time.Duration(tc.age)*time.Second), now), tc.want) // Git's wording
		})
	}
	t.Run("future", func(t *testing.T) {
		is := is.New(t)
		is.Equal(RelativeTime(now.Add(time.Minute), now), "in the future") // clock skew
	})
}

// TestRelativeTimeMatchesGit asks real git for %cr at a pinned "now"
// (GIT_TEST_DATE_NOW, which git's own test suite uses) and compares.
func TestRelativeTimeMatchesGit(t *testing.T) {
	t.Parallel()
	env := gitEnv(t)
	root := tempDir(t)
	git(t, env, root, "init", "-q")
	const commitTime = 1_500_000_000
	commitEnv := append(env, fmt.Sprintf("GIT_COMMITTER_DATE=@%d +0000", commitTime))
	git(t, commitEnv, root, "commit", "-q", "--allow-empty", "-m", "pinned")
	for _, tc := range relativeCases {
		t.Run(fmt.Sprint(tc.age), func(t *testing.T) {
			is := is.New(t)
			cmd := exec.Command("git", "-C", root, "log", "-1", "--format=%cr")
			cmd.Env = append(env, fmt.Sprintf("GIT_TEST_DATE_NOW=%d", commitTime+tc.age))
			out, err := cmd.Output()
			is.NoErr(err) // git log
			got := RelativeTime(time.Unix(commitTime, 0), time.Unix(commitTime+tc.age, 0))
			is.Equal(got, strings.TrimSpace(string(out))) // the same words as git
		})
	}
}
