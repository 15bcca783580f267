package worktree_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/worktree"
)

func TestAMessageIsSanitizedBeforeAnyoneSeesIt(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"control characters", "fatal:\x1b[31m bad\r\nref\x00", "fatal: [31m bad ref"},
		{"a format character", "a\u202eb", "a b"},
		{"a URL's user and secret", "fatal: unable to access 'https://ann:hunter2@git.example/r.git/'", "fatal: unable to access 'https://git.example/r.git/'"},
		{"a GitHub token", "token ghp_abcDEF123456 refused", "token [redacted] refused"},
		{"a Slack token", "xoxb-1234-abcd leaked", "[redacted] leaked"},
		{"a key's value", "password=hunter2 api_key: 'abc def'", "password=[redacted] api_key: [redacted]"},
		{"an absolute path", "fatal: '/home/ann/src/app.worktrees/x' already exists", "fatal: '[path]' already exists"},
		{"a Windows path", `cannot open C:\Users\ann\x`, "cannot open [path]"},
		{"a relative ref stays", "origin/release is not a commit", "origin/release is not a commit"},
		{"whitespace collapsed", "  a \t\n b  ", "a b"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(worktree.Sanitize(tc.in), tc.want) // sanitized
		})
	}
	is := is.New(t)
	long := worktree.Sanitize(strings.Repeat("ab ", 200))
	is.Equal(utf8.RuneCountInString(long), worktree.MaxMessage) // cut to 300
	is.True(strings.HasSuffix(long, "…"))                       // and says so
}
