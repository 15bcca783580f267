package worktree_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// The branch-name rules, one row per rule of the earlier system's list
// (and the stricter ones Wharf adds), in its order.
func TestCheckBranchAppliesEveryRuleInOrder(t *testing.T) {
	long := strings.Repeat("é", 64)
	for _, tc := range []struct {
		name, branch, want string
	}{
		{"a plain name", "feature", ""},
		{"a name with folders", "feature/login-page_2", ""},
		{"64 code points", long, ""},
		{"65 code points", long + "x", "Branch names are limited to 64 characters in Wharf."},
		{"empty", "", "That is not a valid branch name."},
		{"at alone", "@", "That is not a valid branch name."},
		{"a leading dash", "-x", "That is not a valid branch name."},
		{"a leading slash", "/x", "That is not a valid branch name."},
		{"a space", "a b", "That is not a valid branch name."},
		{"a tab", "a\tb", "That is not a valid branch name."},
		{"a control character", "a\x01b", "That is not a valid branch name."},
		{"DEL", "a\x7fb", "That is not a valid branch name."},
		{"a C1 control", "a\u0085b", "That is not a valid branch name."},
		{"a zero-width space", "a\u200bb", "That is not a valid branch name."},
		{"a tilde", "a~1", "That is not a valid branch name."},
		{"a caret", "a^", "That is not a valid branch name."},
		{"a colon", "a:b", "That is not a valid branch name."},
		{"a question mark", "a?", "That is not a valid branch name."},
		{"a star", "a*", "That is not a valid branch name."},
		{"a backslash", `a\b`, "That is not a valid branch name."},
		{"a bracket", "a[b", "That is not a valid branch name."},
		{"two dots", "a..b", "That is not a valid branch name."},
		{"at brace", "a@{1}", "That is not a valid branch name."},
		{"two slashes", "a//b", "That is not a valid branch name."},
		{"a trailing slash", "a/", "That is not a valid branch name."},
		{"a trailing dot", "a.", "That is not a valid branch name."},
		{"a component starting with a dot", "a/.b", "That is not a valid branch name."},
		{"a component ending in .lock", "a.lock/b", "That is not a valid branch name."},
		{"a name ending in .lock", "b.lock", "That is not a valid branch name."},
		{"invalid UTF-8", "a\xffb", "That is not a valid branch name."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := worktree.CheckBranch(tc.branch)
			if tc.want == "" {
				is.True(err == nil) // accepted
				return
			}
			is.True(err != nil)                    // refused
			is.Equal(err.Code, hub.WTInvalidInput) // as invalid input
			is.Equal(err.Message, tc.want)         // with the contract's message
			is.Equal(err.Retry, hub.WTRetryNone)   // and nothing to retry
		})
	}
}

func TestAFolderNameIsSafeAndTheFallbackTellsBranchesApart(t *testing.T) {
	for _, tc := range []struct{ branch, folder string }{
		{"feature", "feature"},
		{"Feature/Login", "feature-login"},
		{"fix_1-2", "fix_1-2"},
		{"-x", "x"},
		{"über", "ber"}, // "ü" becomes "-", and the leading dash goes
		{"日本", "branch"},
		{strings.Repeat("a", 150), strings.Repeat("a", 100)},
	} {
		t.Run(tc.branch, func(t *testing.T) {
			is := is.New(t)
			is.Equal(worktree.FolderName(tc.branch), tc.folder) // the folder
		})
	}
	is := is.New(t)
	a, b := worktree.Destinations("/src/app", "feature/x"), worktree.Destinations("/src/app", "feature-x")
	is.Equal(a[0], "/src/app.worktrees/feature-x") // beside the main checkout
	is.Equal(a[0], b[0])                           // two branches, one folder name
	is.True(a[1] != b[1])                          // but two fallbacks
	is.True(strings.HasPrefix(a[1], "/src/app.worktrees/feature-x-"))
}
