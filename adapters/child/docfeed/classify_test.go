package docfeed

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

func TestKindByName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Kind{
		"a.md": KindMarkdown, "a.markdown": KindMarkdown, "a.mdown": KindMarkdown, "a.mkd": KindMarkdown,
		"A.MD": KindMarkdown, "a.adoc": KindAsciiDoc, "a.asciidoc": KindAsciiDoc, "a.asc": KindAsciiDoc,
		"a.txt": "", "Makefile": "", "a.md.bak": "", ".md": KindMarkdown,
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(kindByName(name), want) // by extension, or sniff ("")
		})
	}
}

func TestLooksText(t *testing.T) {
	t.Parallel()
	euro := "€" // three bytes
	for _, tc := range []struct {
		name      string
		sample    string
		truncated bool
		want      bool
	}{
		{"empty", "", false, true},
		{"ascii", "hello\n", false, true},
		{"utf-8", "grüße " + euro, false, true},
		{"NUL", "a\x00b", false, false},
		{"latin-1", "gr\xfc\xdfe", false, false},
		{"cut rune at the limit", "ab" + euro[:2], true, true},
		{"cut rune at the end of file", "ab" + euro[:2], false, false},
		{"invalid tail at the limit", "ab\xff", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(looksText([]byte(tc.sample), tc.truncated), tc.want) // text or binary
		})
	}
}

func TestSniffKind(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{
		"text":     strings.Repeat("é", sniffBytes), // a rune straddles the 8 KiB limit
		"late-nul": strings.Repeat("a", sniffBytes) + "\x00",
		"binary":   "\x89PNG\x00",
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("text", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want Kind
		err  error
	}{
		{"text", KindText, nil},
		{"late-nul", KindText, nil}, // only the first 8 KiB count
		{"binary", KindBinary, nil},
		{"fifo", "", errNotRegular}, // never blocks on a FIFO
		{"link", "", errNotRegular}, // never follows a link
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			k, err := sniffKind(filepath.Join(dir, tc.name))
			is.Equal(err, tc.err) // error
			is.Equal(k, tc.want)  // kind
		})
	}
}
