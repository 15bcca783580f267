package hub

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// DocumentContext is what a document subscription watches: a
// LiveDocumentKey parsed. Equal contexts are equal values however the
// client spelled them. The Hub validates keys with it and the workspace
// child (adapters/child/docfeed) parses them with it, so the two cannot
// disagree on a context.
type DocumentContext struct {
	// CompareTarget is "base" or "last-commit".
	CompareTarget string
	// DocumentID is the pinned document (an absolute, clean path) in file
	// scope, "" in folder scope.
	DocumentID string
}

// ParseDocumentKey parses a LiveDocumentKey: form-urlencoded
// `compareTarget` (base | last-commit), `scope` (folder | file) and
// `documentId` (an absolute, clean path, required with scope=file and
// refused without it), each at most once, at most MaxLiveKeyBytes long as
// sent and in its canonical (escaped) spelling.
// Empty means the default context. Anything else is Invalid, with a
// message that quotes at most a short prefix of what was sent.
func ParseDocumentKey(key string) (DocumentContext, error) {
	c := DocumentContext{CompareTarget: "base"}
	if len(key) > MaxLiveKeyBytes {
		return c, keyError("longer than %d bytes", MaxLiveKeyBytes)
	}
	if !utf8.ValidString(key) {
		return c, keyError("not valid UTF-8")
	}
	vals, err := url.ParseQuery(key)
	if err != nil {
		// ParseQuery's message quotes the input; say it in our own words.
		return c, keyError("not form-urlencoded")
	}
	scope := "folder"
	for name, vs := range vals {
		if len(vs) != 1 {
			return c, keyError("parameter %s given more than once", quote(name))
		}
		v := vs[0]
		switch name {
		case "compareTarget":
			if v != "base" && v != "last-commit" {
				return c, keyError("compareTarget must be base or last-commit, not %s", quote(v))
			}
			c.CompareTarget = v
		case "scope":
			if v != "folder" && v != "file" {
				return c, keyError("scope must be folder or file, not %s", quote(v))
			}
			scope = v
		case "documentId":
			if err := checkDocumentID(v); err != nil {
				return c, err
			}
			c.DocumentID = v
		default:
			return c, keyError("unknown parameter %s", quote(name))
		}
	}
	switch {
	case scope == "file" && c.DocumentID == "":
		return c, keyError("scope=file requires documentId")
	case scope == "folder" && c.DocumentID != "":
		return c, keyError("documentId requires scope=file")
	}
	// The canonical spelling escapes what the client may have sent raw,
	// and it is what goes on (to the child, into feeds): it must be a key
	// this function accepts too.
	if len(c.String()) > MaxLiveKeyBytes {
		return c, keyError("longer than %d bytes once escaped", MaxLiveKeyBytes)
	}
	return c, nil
}

// checkDocumentID accepts absolute, clean paths only, so one document has
// exactly one spelling.
func checkDocumentID(v string) error {
	switch {
	case !utf8.ValidString(v):
		return keyError("documentId is not valid UTF-8")
	case strings.IndexByte(v, 0) >= 0:
		return keyError("documentId contains a NUL byte")
	case !path.IsAbs(v):
		return keyError("documentId must be an absolute path")
	case path.Clean(v) != v:
		return keyError("documentId must be a clean path (no ., .. or repeated or trailing slashes)")
	}
	return nil
}

// String is the context's canonical spelling: compareTarget, then scope,
// then documentId in file scope, always explicit
// ("compareTarget=base&scope=folder"). Parsing it gives c back.
func (c DocumentContext) String() string {
	var b strings.Builder
	b.WriteString("compareTarget=")
	b.WriteString(url.QueryEscape(c.CompareTarget))
	if c.DocumentID == "" {
		b.WriteString("&scope=folder")
		return b.String()
	}
	b.WriteString("&scope=file&documentId=")
	b.WriteString(url.QueryEscape(c.DocumentID))
	return b.String()
}

func keyError(format string, args ...any) error {
	return Errorf(Invalid, "invalid document key: %s", fmt.Sprintf(format, args...))
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
