package hub

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDisplayName is the longest display name, in characters (code points).
const MaxDisplayName = 64

// Bounds of names and paths on the Hub host: the longest file name and
// path the host's file systems accept (NAME_MAX and PATH_MAX less the
// terminating NUL on Linux and the BSDs). Longer input is invalid, not a
// conflict with something on disk.
const (
	MaxFolderNameBytes = 255
	MaxPathBytes       = 4095
)

// isJSSpace reports the white space that clients' trim() removes: the set
// of ECMAScript WhiteSpace and LineTerminator. Go's unicode.IsSpace differs
// (it has U+0085, lacks U+FEFF), and names must trim as the clients do.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// isInvisible reports control (Cc, C1 included) and format (Cf) characters:
// zero-width characters, bidi controls, the byte-order mark, tag characters.
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// validFolderName reports whether name is one visible, non-hidden path
// segment: not blank, not starting with a dot (so neither "." nor ".."),
// without a path separator, and without any Cc or Cf character. Leading and
// trailing spaces are significant and kept.
func validFolderName(name string) bool {
	if name == "" || name[0] == '.' || !utf8.ValidString(name) {
		return false
	}
	visible := false
	for _, r := range name {
		if r == '/' || r == '\\' || isInvisible(r) {
			return false
		}
		if !isJSSpace(r) {
			visible = true
		}
	}
	return visible
}

// CheckFolderName validates a FolderName sent in the field called field.
func CheckFolderName(field, name string) error {
	if !validFolderName(name) {
		return Errorf(Invalid, "%s must be one visible non-hidden path segment", field)
	}
	if len(name) > MaxFolderNameBytes {
		return Errorf(Invalid, "%s is longer than %d bytes", field, MaxFolderNameBytes)
	}
	return nil
}

// NormalizeDisplayName trims name as clients trim and checks it: 1 to 64
// visible characters under the rule of NormalizeVisibleText, so a name
// cannot hide or reorder what a person reads. Combining marks belong to
// the character before them and do not count. It returns the stored form.
func NormalizeDisplayName(name string) (string, error) {
	name, err := NormalizeVisibleText("workspace display name", name)
	if err != nil {
		return "", err
	}
	if visibleLen(name) > MaxDisplayName {
		return "", Errorf(Invalid, "workspace display name must be at most %d characters", MaxDisplayName)
	}
	return name, nil
}

// NormalizeVisibleText is the one rule for text a person reads as a name
// (workspace display names, conversation titles): s is trimmed as clients
// trim, and refused (Invalid, the message naming it what) unless it is
// valid UTF-8 with a visible character and no control character (Cc, C1
// included) or format character (Cf: zero-width characters, bidi
// controls, the byte-order mark, tags), which could hide or reorder what
// a person reads. Callers add their own length bound.
func NormalizeVisibleText(what, s string) (string, error) {
	s = strings.TrimFunc(s, isJSSpace)
	switch {
	case !utf8.ValidString(s):
		return "", Errorf(Invalid, "%s must be valid UTF-8", what)
	case s == "":
		return "", Errorf(Invalid, "%s must not be empty", what)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Cc, r) }) >= 0:
		return "", Errorf(Invalid, "%s must not contain control characters", what)
	case strings.IndexFunc(s, func(r rune) bool { return !isJSSpace(r) && !isInvisible(r) }) < 0:
		return "", Errorf(Invalid, "%s must contain a visible character", what)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) >= 0:
		return "", Errorf(Invalid, "%s must not contain format characters (zero-width, bidi or byte-order marks)", what)
	}
	return s, nil
}

// RemoveInvisible drops from s every character NormalizeVisibleText
// refuses inside a name (control and format characters) and trims what
// is left as clients trim: a name derived from text nobody checked (a
// folder's name, a message's first line, an agent's title).
func RemoveInvisible(s string) string {
	return strings.TrimFunc(strings.Map(func(r rune) rune {
		if isInvisible(r) {
			return -1
		}
		return r
	}, s), isJSSpace)
}

// visibleLen counts the characters of s a person sees: code points less
// the combining marks, which draw on the character before them.
func visibleLen(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.In(r, unicode.Mn, unicode.Me) {
			n++
		}
	}
	return n
}

// DefaultDisplayName derives a display name from a folder: its base name
// without control or format characters, trimmed, at most 64 characters;
// "workspace" when nothing is left.
func DefaultDisplayName(dir string) string {
	name := RemoveInvisible(path.Base(dir))
	if utf8.RuneCountInString(name) > MaxDisplayName {
		name = strings.TrimFunc(string([]rune(name)[:MaxDisplayName]), isJSSpace)
	}
	if name == "" || name == "/" {
		return "workspace"
	}
	return name
}
