package docfeed

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// CompareTarget is what a subscriber's repository view compares the working
// tree against (the contract's DocumentCompareTarget).
type CompareTarget string

const (
	// CompareBase compares against the merge base with the repository's
	// default branch (origin/HEAD, else main or master).
	CompareBase CompareTarget = "base"
	// CompareLastCommit compares against HEAD.
	CompareLastCommit CompareTarget = "last-commit"
)

// Scope is the kind of a subscriber's document scope (the contract's
// DocumentScope.kind).
type Scope string

const (
	// ScopeFolder receives every document of the workspace.
	ScopeFolder Scope = "folder"
	// ScopeFile receives one pinned document only (Key.DocumentID), but
	// every revision advance.
	ScopeFile Scope = "file"
)

// MaxKeyBytes bounds a LiveDocumentKey, as the contract does.
const MaxKeyBytes = 4096

// ErrInvalidKey is wrapped by every error of ParseKey and Subscribe about
// the key itself; the Hub and Handler answer it with 400.
var ErrInvalidKey = errors.New("invalid document key")

// Key is a parsed LiveDocumentKey: one watch context. Keys are comparable
// values, so equal contexts are equal keys however the client spelled
// them; use Key as a map key, never the raw string.
//
// The zero Key is not valid; ParseKey("") returns the default context
// (CompareBase, ScopeFolder).
type Key struct {
	CompareTarget CompareTarget
	Scope         Scope
	// DocumentID is the absolute, clean path of the pinned document; set
	// exactly when Scope is ScopeFile.
	DocumentID string
}

// defaultKey is the context of an empty key.
var defaultKey = Key{CompareTarget: CompareBase, Scope: ScopeFolder}

// ParseKey validates a LiveDocumentKey: a form-urlencoded string of
// compareTarget (base | last-commit), scope (folder | file) and documentId
// (an absolute path, required with scope=file and refused otherwise), each
// at most once, at most MaxKeyBytes long. Empty means the default context
// (compareTarget=base, folder scope). Any error wraps ErrInvalidKey and its
// text is safe to show to the client (it quotes at most a short prefix of
// what was sent).
func ParseKey(s string) (Key, error) {
	if len(s) > MaxKeyBytes {
		return Key{}, keyError("longer than %d bytes", MaxKeyBytes)
	}
	if !utf8.ValidString(s) {
		return Key{}, keyError("not valid UTF-8")
	}
	values, err := url.ParseQuery(s)
	if err != nil {
		// ParseQuery's message quotes the input; say it in our own words.
		return Key{}, keyError("not form-urlencoded")
	}
	k := defaultKey
	for name, vs := range values {
		if len(vs) > 1 {
			return Key{}, keyError("parameter %s given more than once", quote(name))
		}
		v := vs[0]
		switch name {
		case "compareTarget":
			switch t := CompareTarget(v); t {
			case CompareBase, CompareLastCommit:
				k.CompareTarget = t
			default:
				return Key{}, keyError("compareTarget must be base or last-commit, not %s", quote(v))
			}
		case "scope":
			switch sc := Scope(v); sc {
			case ScopeFolder, ScopeFile:
				k.Scope = sc
			default:
				return Key{}, keyError("scope must be folder or file, not %s", quote(v))
			}
		case "documentId":
			if err := checkDocumentID(v); err != nil {
				return Key{}, err
			}
			k.DocumentID = v
		default:
			return Key{}, keyError("unknown parameter %s", quote(name))
		}
	}
	switch {
	case k.Scope == ScopeFile && k.DocumentID == "":
		return Key{}, keyError("scope=file requires documentId")
	case k.Scope == ScopeFolder && k.DocumentID != "":
		return Key{}, keyError("documentId requires scope=file")
	}
	return k, nil
}

// checkDocumentID accepts absolute, clean paths only, so one document has
// exactly one spelling (the id the feed publishes).
func checkDocumentID(v string) error {
	switch {
	case !utf8.ValidString(v):
		return keyError("documentId is not valid UTF-8")
	case strings.IndexByte(v, 0) >= 0:
		return keyError("documentId contains a NUL byte")
	case !filepath.IsAbs(v):
		return keyError("documentId must be an absolute path")
	case filepath.Clean(v) != v:
		return keyError("documentId must be a clean path (no ., .. or repeated or trailing slashes)")
	}
	return nil
}

// String is the key's canonical spelling: compareTarget, then scope, then
// documentId for file scope, always explicit
// ("compareTarget=base&scope=folder"). ParseKey(k.String()) == k.
func (k Key) String() string {
	var b strings.Builder
	b.WriteString("compareTarget=")
	b.WriteString(url.QueryEscape(string(k.CompareTarget)))
	b.WriteString("&scope=")
	b.WriteString(url.QueryEscape(string(k.Scope)))
	if k.Scope == ScopeFile {
		b.WriteString("&documentId=")
		b.WriteString(url.QueryEscape(k.DocumentID))
	}
	return b.String()
}

func keyError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidKey, fmt.Sprintf(format, args...))
}

// quote quotes at most 64 bytes of client input for an error message.
func quote(s string) string {
	const limit = 64
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
