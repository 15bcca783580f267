package docfeed

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	file := func(id string) Key { return Key{CompareTarget: CompareBase, Scope: ScopeFile, DocumentID: id} }
	for _, tc := range []struct {
		name, key string
		want      Key
		err       string // a fragment of the error; "" for success
	}{
		{"empty is the default", "", defaultKey, ""},
		{"explicit default", "compareTarget=base&scope=folder", defaultKey, ""},
		{"any order", "scope=folder&compareTarget=last-commit", Key{CompareLastCommit, ScopeFolder, ""}, ""},
		{"file scope", "scope=file&documentId=%2Fw%2Fa.md", file("/w/a.md"), ""},
		{"plus is a space", "scope=file&documentId=/w/my+notes.md", file("/w/my notes.md"), ""},
		{"unknown parameter", "colour=blue", Key{}, `unknown parameter "colour"`},
		{"repeated parameter", "scope=folder&scope=folder", Key{}, "more than once"},
		{"bad target", "compareTarget=HEAD", Key{}, "compareTarget must be"},
		{"empty target", "compareTarget=", Key{}, "compareTarget must be"},
		{"bad scope", "scope=files", Key{}, "scope must be"},
		{"file without document", "scope=file", Key{}, "requires documentId"},
		{"document without file scope", "documentId=/w/a.md", Key{}, "requires scope=file"},
		{"relative document", "scope=file&documentId=a.md", Key{}, "absolute"},
		{"unclean document", "scope=file&documentId=/w/../a.md", Key{}, "clean"},
		{"trailing slash", "scope=file&documentId=/w/", Key{}, "clean"},
		{"NUL in document", "scope=file&documentId=/w/a%00", Key{}, "NUL"},
		{"invalid UTF-8 in document", "scope=file&documentId=/w/%FF", Key{}, "UTF-8"},
		{"bad escape", "scope=%zz", Key{}, "form-urlencoded"},
		{"semicolon", "scope=folder;compareTarget=base", Key{}, "form-urlencoded"},
		{"too long", "scope=file&documentId=/" + strings.Repeat("a", MaxKeyBytes), Key{}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			k, err := ParseKey(tc.key)
			if tc.err == "" {
				is.NoErr(err)        // accepted
				is.Equal(k, tc.want) // parsed context
				back, err := ParseKey(k.String())
				is.NoErr(err)           // the canonical spelling parses
				is.Equal(back, tc.want) // to the same context
				return
			}
			is.True(errors.Is(err, ErrInvalidKey))         // refused as a bad key
			is.True(strings.Contains(err.Error(), tc.err)) // with the reason
		})
	}
}

func TestKeyString(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(defaultKey.String(), "compareTarget=base&scope=folder") // explicit default
	k := Key{CompareTarget: CompareLastCommit, Scope: ScopeFile, DocumentID: "/w/a b&c.md"}
	is.Equal(k.String(), "compareTarget=last-commit&scope=file&documentId=%2Fw%2Fa+b%26c.md") // escaped
}

func TestQuoteBoundsEcho(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := ParseKey(strings.Repeat("é", 100) + "=1")
	is.True(err != nil)                         // unknown parameter
	is.True(len(err.Error()) < 120)             // echoes a bounded prefix only
	is.True(strings.Contains(err.Error(), "…")) // marked as cut
}
