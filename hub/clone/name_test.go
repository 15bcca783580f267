package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// TestAFolderNameIsDerivedFromTheURLsLastPart copies research §11.1's
// derivation and its examples row by row; the rows after them are the
// FolderName rule a derived name must also pass.
func TestAFolderNameIsDerivedFromTheURLsLastPart(t *testing.T) {
	const (
		required = "a git clone URL is required"
		derived  = "the folder name derived from the clone URL is not a single folder name; give folderName"
	)
	for _, tc := range []struct{ row, url, want, refusal string }{
		{"11.1 SCP-like", "git@github.com:me/uatu.git", "uatu", ""},
		{"11.1 a trailing slash", "https://github.com/me/uatu.git/", "uatu", ""},
		{"11.1 a local path", "/local/path/repo", "repo", ""},
		{"11.1 a query is kept", "https://example.com/repo?x", "repo?x", ""},
		{"11.1 trimmed", "  https://github.com/me/uatu.git  ", "uatu", ""},
		{"11.1 several trailing slashes", "https://github.com/me/uatu///", "uatu", ""},
		{"11.1 the part after a colon", "host:repo.git", "repo", ""},
		{"11.1 only one .git is dropped", "/srv/r.git.git", "r.git", ""},
		{"11.1 ///", "///", "", required},
		{"11.1 ..", "..", "", required},
		{"11.1 .", "https://example.com/.", "", required},
		{"11.1 ..git", "https://example.com/..git", "", required},
		{"11.1 empty", "", "", required},
		{"11.1 a bare host: after its colon", "host:", "", required},
		{"11.1 .git alone", "https://example.com/.git", "", required},
		{"FolderName: hidden", "https://github.com/org/.github", "", derived},
		{"FolderName: a backslash", `/srv/a\b`, "", derived},
		{"FolderName: a format character", "https://example.com/re\u200bpo", "", derived},
		{"FolderName: a C1 control", "/srv/re\u0085po", "", derived},
		{"FolderName: a leading dash is a name (Git gets it after --)", "/srv/-x", "-x", ""},
		{"FolderName: 255 bytes", "/srv/" + strings.Repeat("é", 127) + "a", strings.Repeat("é", 127) + "a", ""},
		{"FolderName: 256 bytes", "/srv/" + strings.Repeat("é", 128), "", derived},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := clone.DeriveFolderName(tc.url)
			refused(is, err, hub.Invalid, tc.refusal)
			is.Equal(got, tc.want) // the derived name
		})
	}
}

// TestARequestedFolderNameMeetsTheFolderNameBar copies the bad
// names and the FolderName tests (`ced78e9`) the research cites.
func TestARequestedFolderNameMeetsTheFolderNameBar(t *testing.T) {
	const single = "checkout folder name must be a single folder name"
	for _, tc := range []struct{ row, name, want, refusal string }{
		{"a name", "my-checkout", "my-checkout", ""},
		{"trimmed", "  my-checkout\t", "my-checkout", ""},
		{"a byte-order mark trimmed", "\uFEFFrepo", "repo", ""},
		{"blank derives", "   ", "", ""},
		{"inner spaces are kept", "my checkout", "my checkout", ""},
		{"..", "..", "", single},
		{".", ".", "", single},
		{"a/b (nested)", "a/b", "", single},
		{`a\b`, `a\b`, "", single},
		{"hidden", ".repo", "", single},
		{"NUL", "re\x00po", "", single},
		{"a C1 control", "re\u0085po", "", single},
		{"a zero-width space", "re\u200bpo", "", single},
		{"a bidi override", "\u202eopre", "", single},
		{"a soft hyphen", "re\u00adpo", "", single},
		{"a tag character", "re\U000E0041po", "", single},
		{"invalid UTF-8", "re\xffpo", "", single},
		{"255 bytes", strings.Repeat("a", 255), strings.Repeat("a", 255), ""},
		{"256 bytes", strings.Repeat("a", 256), "", "checkout folder name is longer than 255 bytes"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := clone.CheckFolderName(tc.name)
			refused(is, err, hub.Invalid, tc.refusal)
			is.Equal(got, tc.want) // the checked name
		})
	}
}
