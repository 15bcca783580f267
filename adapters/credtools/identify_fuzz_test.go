package credtools

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// FuzzIdentify checks, for any output, that the version line is clean
// (valid UTF-8, no control or format characters, trimmed, at most 160
// characters), and that output whose every line has been indented by a
// word, so that the phrases it holds are mentioned but start no line,
// identifies no tool.
func FuzzIdentify(f *testing.F) {
	f.Add([]byte("git version 2.39.5\n"), []byte(""))
	f.Add([]byte(""), []byte("OpenSSH_9.2p1 Debian-2+deb12u6\n"))
	f.Add([]byte(""), []byte("unknown option -- ?\nusage: ssh-agent [-c | -s]\n"))
	f.Add([]byte(""), []byte(noAgentLine+"\r\n"))
	f.Add([]byte("gh version 2.45.0 (2024-03-04)\n"), []byte("\x1b[0m\u202e"))
	f.Add([]byte("glab 1.46.1 (58e5a5c5)\n\xff"), []byte("gpg (GnuPG) 2.2.40"))
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		v := versionLine(stdout, stderr)
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxVersionLen || v != strings.TrimSpace(v) {
			t.Fatalf("version %q is not clean", v)
		}
		for _, r := range v {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("version %q holds %U", v, r)
			}
		}
		mention := func(b []byte) []byte {
			return []byte("frob " + strings.ReplaceAll(string(b), "\n", "\nfrob "))
		}
		mout, merr := mention(stdout), mention(stderr)
		mv := versionLine(mout, merr)
		for _, tool := range hub.CredentialTools() {
			identifies(tool, v, stdout, stderr) // never panics
			if identifies(tool, mv, mout, merr) {
				t.Fatalf("%s identified by output that only mentions it: %q, %q", tool, mout, merr)
			}
		}
	})
}
