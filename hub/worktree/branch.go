package worktree

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// MaxBranch is the longest branch name, in code points: the branch
// becomes the tree's display name, which is capped at 64.
const MaxBranch = 64

// The branch refusals' messages.
const (
	msgBranchTooLong = "Branch names are limited to 64 characters in Wharf."
	msgBranchInvalid = "That is not a valid branch name."
)

// CheckBranch checks a branch name as Git's check-ref-format does for a
// branch, a little stricter (no whitespace or control character
// anywhere), and within MaxBranch. The rules, in order:
//
//   - at most 64 code points, else "Branch names are limited to …";
//   - valid UTF-8, not empty, not "@";
//   - not starting with "-" or "/", not ending with "/" or ".";
//   - no whitespace, control character, DEL, or any of ~ ^ : ? * \ [;
//   - no "..", "@{" or "//";
//   - no component starting with "." or ending with ".lock".
func CheckBranch(name string) *hub.WorktreeError {
	if utf8.RuneCountInString(name) > MaxBranch {
		return hub.WorktreeRefusal(hub.WTInvalidInput, msgBranchTooLong)
	}
	if !validBranch(name) {
		return hub.WorktreeRefusal(hub.WTInvalidInput, msgBranchInvalid)
	}
	return nil
}

func validBranch(name string) bool {
	switch {
	case name == "" || name == "@" || !utf8.ValidString(name):
		return false
	case strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/"):
		return false
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return false
	case strings.ContainsAny(name, "~^:?*\\[") || strings.ContainsFunc(name, badRune):
		return false
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return false
	}
	for c := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}

// badRune is whitespace, a control character (DEL and the C1 controls
// included) or a format character, which would hide in a name shown as
// a display name.
func badRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}
