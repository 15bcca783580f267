package gitcmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// configCases are config files that exercise git's parser: each is read
// by parseConfig and by git itself, and must read alike.
var configCases = []struct {
	name, text string
}{
	{"a section", "[core]\n\tbare = false\n\tfilemode = true\n"},
	{"a subsection", "[remote \"origin\"]\n\turl = https://example.com/x.git\n"},
	{"the legacy subsection, lower-cased", "[Remote.Origin]\n\tURL = x\n"},
	{"a subsection keeps its case", "[Section \"Sub\"]\n\tKey = v\n"},
	{"escapes in a subsection", "[a \"b\\\"c\\\\d\\e\"]\n\tk = v\n"},
	{"dots in a subsection", "[a.b \"c.d\"]\n\tk = v\n"},
	{"an empty subsection", "[a \"\"]\n\tk = v\n"},
	{"an empty legacy subsection", "[a.]\n\tk = v\n"},
	{"quotes and comments", "[s]\n\tk = \"a;b\" # c\n\tl = a#b\n\tm = \"x\" \"y\"\n"},
	{"escapes in a value", "[s]\n\tk = a\\tb\\nc\\bd\\\\e\\\"f\n"},
	{"an unknown escape", "[s]\n\tk = x\\y\n"},
	{"a continued line", "[s]\n\tk = a\\\n   b\n"},
	{"whitespace in a value", "[s]\n\tk =   a \t  b   \n\tl =\t\"  kept  \"  \n"},
	{"a bare key", "[s]\n\tk\n\tl =\n"},
	{"CRLF", "[s]\r\n\tk = v\r\n\tl = \"a\r\"\r\n"},
	{"a lone CR", "[s]\n\tk = a\rb\n"},
	{"a byte-order mark", "\xef\xbb\xbfk\n[s]\n\tk = v\n"},
	{"a partial byte-order mark", "\xef\xbb[s]\n\tk = v\n"},
	{"a header and a key on one line", "[s] k = v\n[t]l=w"},
	{"an unclosed header", "[s\n\tk = v\n"},
	{"an unclosed subsection", "[s \"x]\n\tk = v\n"},
	{"text after a subsection", "[s \"x\" ]\n\tk = v\n"},
	{"an unclosed quote", "[s]\n\tk = \"v\n"},
	{"a key starting with a digit", "[s]\n\t1k = v\n"},
	{"a key without =", "[s]\n\tk v\n"},
	{"a key with a dash", "[core]\n\tsome-Key = v\n"},
	{"a key before any section", "k = v\n[s]\n\tl = w\n"},
	{"comments", "; one\n# two\n[s] ; three\n\tk = v ; four\n"},
	{"non-ASCII bytes", "[s \"\xc3\xa9\"]\n\tk = \xc3\xa9 \xff\n"},
	{"vertical tab and form feed", "[s]\n\tk = a\vb\n\tl =\fv\n"},
	{"a section again", "[s]\n\tk = 1\n[t]\n\tk = 2\n[s]\n\tk = 3\n"},
	{"no newline at the end", "[s]\n\tk = v"},
	{"a backslash at the end", "[s]\n\tk = v\\"},
	{"an empty header", "[]\n\tk = v\n"},
	{"an empty file", ""},
	{"an include", "[include]\n\tpath = /etc/passwd\n[includeIf \"gitdir:/\"]\n\tpath = x\n"},
}

// gitList returns git's own reading of a config file: its settings, or
// ok false when git refuses the file.
func gitList(t *testing.T, text string) (_ []configEntry, ok bool) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "config")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", p, "--no-includes", "--list", "-z")
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var got []configEntry
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		k, v, hasValue := strings.Cut(rec, "\n")
		got = append(got, configEntry{key: k, value: v, bare: !hasValue})
	}
	return got, true
}

// TestConfigIsReadAsGitReadsIt compares parseConfig with git's own parser
// on every case, and checks that what writeConfig writes reads back, by
// both, as the same settings.
func TestConfigIsReadAsGitReadsIt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := parseConfig([]byte(tc.text))
			want, ok := gitList(t, tc.text)
			is.Equal(err == nil, ok) // refused where git refuses
			if !ok {
				return
			}
			is.Equal(got, want) // and read as git reads it
			written := withSection(got)
			again, err := parseConfig(writeConfig(got))
			is.NoErr(err)            // what is written parses
			is.Equal(again, written) // back into the same settings (those in a section)
			byGit, ok := gitList(t, string(writeConfig(got)))
			is.True(ok)              // git reads it
			is.Equal(byGit, written) // as the same settings
		})
	}
}

// withSection leaves out the settings writeConfig leaves out.
func withSection(settings []configEntry) []configEntry {
	return slices.DeleteFunc(slices.Clone(settings), func(s configEntry) bool { return !strings.Contains(s.key, ".") })
}

// FuzzParseConfig checks that what parseConfig reads, writeConfig writes
// back unchanged, and, where git is installed, that parseConfig reads as
// git reads.
func FuzzParseConfig(f *testing.F) {
	for _, tc := range configCases {
		f.Add([]byte(tc.text))
	}
	_, noGit := exec.LookPath("git")
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseConfig(b)
		if noGit == nil && !bytes.ContainsRune(b, 0) {
			want, ok := gitList(t, string(b))
			if ok != (err == nil) || ok && !slices.Equal(got, want) {
				t.Fatalf("parseConfig read %+v (%v), git %+v (ok %v)", got, err, want, ok)
			}
		}
		if err != nil {
			return
		}
		again, err := parseConfig(writeConfig(got))
		if err != nil {
			t.Fatalf("writeConfig's output does not parse: %v", err)
		}
		if !slices.Equal(again, withSection(got)) {
			t.Fatalf("round trip changed the settings:\n%+v\n%+v", got, again)
		}
	})
}
