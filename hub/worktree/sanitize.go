package worktree

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessage is the longest refusal message, in code points.
const MaxMessage = 300

var (
	// userinfo is the user and secret of a URL: scheme://user:secret@.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]*@`)
	// tokenShape is a credential that names itself by its shape.
	tokenShape = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9_]+|github_pat_[A-Za-z0-9_]+|glpat-[A-Za-z0-9_-]+|xox[abposr]-[A-Za-z0-9-]+|sk-[A-Za-z0-9_-]{8,})`)
	// secretValue is a value after a key that names a secret.
	secretValue = regexp.MustCompile(`(?i)\b(password|passphrase|secret|token|authorization|api[_-]?key)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)`)
	// absPath is an absolute POSIX path (a "/" that begins a word) or a
	// Windows one (C:\ or C:/, or \\server).
	absPath = regexp.MustCompile(`(?:^|[\s'"(=])((?:/|[A-Za-z]:[\\/]|\\\\)[^\s'"()]*)`)
)

// Sanitize makes a message derived from Git, SSH or the file system safe
// to show: control and format characters become spaces, a URL's user and
// secret are cut, token shapes and the values of secret-naming keys
// become "[redacted]", absolute paths become "[path]" (a relative ref
// such as origin/release stays), whitespace is collapsed, and the text is
// cut to MaxMessage code points, ending in "…". Invalid UTF-8 becomes
// U+FFFD.
func Sanitize(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, msg)
	msg = userinfo.ReplaceAllString(msg, "$1")
	msg = tokenShape.ReplaceAllString(msg, "[redacted]")
	msg = secretValue.ReplaceAllString(msg, "$1$2[redacted]")
	msg = absPath.ReplaceAllStringFunc(msg, func(m string) string {
		sub := absPath.FindStringSubmatchIndex(m)
		return m[:sub[2]] + "[path]"
	})
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > MaxMessage {
		r := []rune(msg)
		msg = strings.TrimRight(string(r[:MaxMessage-1]), " ") + "…"
	}
	return msg
}
