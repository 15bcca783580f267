package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// folderNames copies the FolderName rule (spec, "Folder and workspace
// request and result shapes") row by row: path separators, every Cc
// (C0, DEL, C1 U+0080-U+009F) and every Cf (zero-width family, bidi
// controls, BOM, tag characters), plus the hidden and blank names.
var folderNames = []struct {
	name string
	in   string
	ok   bool
}{
	{"plain", "project", true},
	{"spaces kept", " padded ", true},
	{"unicode letters", "文書", true},
	{"inner dot", "a.b", true},
	{"empty", "", false},
	{"dot", ".", false},
	{"dot dot", "..", false},
	{"hidden", ".git", false},
	{"only spaces", "   ", false},
	{"only nbsp", "\u00a0", false},
	{"slash", "a/b", false},
	{"backslash", `a\b`, false},
	{"NUL", "a\x00b", false},
	{"C0 tab", "a\tb", false},
	{"C0 newline", "a\nb", false},
	{"DEL", "a\x7fb", false},
	{"C1 U+0080", "a\u0080b", false},
	{"C1 NEL U+0085", "a\u0085b", false},
	{"C1 U+009F", "a\u009fb", false},
	{"zero-width space", "a\u200bb", false},
	{"zero-width non-joiner", "a\u200cb", false},
	{"zero-width joiner", "a\u200db", false},
	{"soft hyphen", "a\u00adb", false},
	{"bidi LRE", "a\u202ab", false},
	{"bidi RLO", "a\u202eb", false},
	{"bidi isolate LRI", "a\u2066b", false},
	{"bidi PDI", "a\u2069b", false},
	{"byte-order mark", "\ufeffname", false},
	{"tag character", "a\U000E0041b", false},
	{"cancel tag", "a\U000E007Fb", false},
	{"invalid UTF-8", "a\xffb", false},
}

func TestFolderNameRule(t *testing.T) {
	for _, tc := range folderNames {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			e.dir("/home/ann/src")
			p, err := e.CreateFolder(e.ctx, "", "/home/ann/src", tc.in)
			if tc.ok {
				is.NoErr(err)                       // a valid name is accepted
				is.Equal(p, "/home/ann/src/"+tc.in) // and kept as given
				is.True(e.isDir(p))                 // the folder exists
				return
			}
			is.Equal(hub.KindOf(err), hub.Invalid)                                           // refused as invalid input
			is.Equal(hub.MessageOf(err), "name must be one visible non-hidden path segment") // with the rule's message
			entries, _ := e.fs.ReadDir("/home/ann/src")
			is.Equal(len(entries), 0) // nothing was created
		})
	}
}

func TestDisplayNameRule(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"kept", "My Project", "My Project", ""},
		{"trimmed", "  My Project \t", "My Project", ""},
		{"64 characters", strings.Repeat("é", 64), strings.Repeat("é", 64), ""},
		{"65 characters", strings.Repeat("é", 65), "", "workspace display name must be at most 64 characters"},
		{"65 after trim is 64", " " + strings.Repeat("a", 64) + " ", strings.Repeat("a", 64), ""},
		{"empty", "", "", "workspace display name must not be empty"},
		{"only spaces", "    ", "", "workspace display name must not be empty"},
		{"only ideographic space", "\u3000", "", "workspace display name must not be empty"},
		{"control character", "a\x01b", "", "workspace display name must not contain control characters"},
		{"C1 control", "a\u0085b", "", "workspace display name must not contain control characters"},
		{"only format characters", "\u200b\u200d", "", "workspace display name must contain a visible character"},
		{"bidi override", "evil\u202etxt.exe", "", "workspace display name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"zero-width space", "a\u200bb", "", "workspace display name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"byte-order mark inside", "a\ufeffb", "", "workspace display name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"combining marks do not count", strings.Repeat("e\u0301", 64), strings.Repeat("e\u0301", 64), ""},
		{"65 with combining marks", strings.Repeat("e\u0301", 65), "", "workspace display name must be at most 64 characters"},
		{"not unique is fine", "workspace", "workspace", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := hub.NormalizeDisplayName(tc.in)
			if tc.err != "" {
				is.Equal(hub.KindOf(err), hub.Invalid) // refused as invalid
				is.Equal(hub.MessageOf(err), tc.err)   // with its message
				return
			}
			is.NoErr(err)          // accepted
			is.Equal(got, tc.want) // stored form
		})
	}
}

func TestWorkspaceIDsFromFolderNames(t *testing.T) {
	tests := []struct{ folder, want string }{
		{"wharf", "wharf"},
		{"My Project!", "my-project"},
		{"---", "workspace"},
		{"文書", "workspace"},
		{"a__b  c", "a-b-c"},
		{"Ünïcode Name", "n-code-name"},
		{strings.Repeat("x", 80), strings.Repeat("x", 48)},
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			id := e.register(e.repo("/home/ann/" + tc.folder))
			is.Equal(id, tc.want) // the id derives from the folder name
		})
	}
}
