package clone_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// chunks splits data at the lengths sizes gives (each 1 + a size byte,
// the sizes used in turn), so a fuzzer explores every split.
func chunks(data, sizes []byte) [][]byte {
	var out [][]byte
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(sizes) > 0 {
			n = min(n, 1+int(sizes[i%len(sizes)]))
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

// FuzzNormalizeOutput checks the normalizer's promises on any bytes and
// any split: the text of the chunks is the text of the whole; it is valid
// UTF-8 with no control character but "\n", "\t" and a "\r" between two
// visible parts of a line; and it is at most three bytes per input byte.
func FuzzNormalizeOutput(f *testing.F) {
	for _, s := range []string{
		"Cloning into 'uatu'...\r\n", "Receiving objects:  10%\rReceiving objects: 100%\r\n",
		"\x1b[1;31mred\x1b[0m", "\x1b]0;title\x07x", "\x1b]8;;u\x1b\\l\x1b]8;;\x1b\\", "\x1bPq\x1b\\",
		"a\xffb\xe2\x82", "\u202eabc", "\x1b[12\x18x", "\r\r\n\r", "\x1b]" + strings.Repeat("x", 5000),
	} {
		f.Add([]byte(s), []byte{0, 3, 1})
	}
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		n := clone.NewNormalizer()
		whole := n.Flush(n.Write(nil, data))
		var split []byte
		for _, c := range chunks(data, sizes) {
			split = n.Write(split, c)
		}
		split = n.Flush(split)
		if !bytes.Equal(whole, split) {
			t.Fatalf("split %q gives %q, whole gives %q", chunks(data, sizes), split, whole)
		}
		if !utf8.Valid(whole) {
			t.Fatalf("%q gives invalid UTF-8 %q", data, whole)
		}
		if len(whole) > 3*len(data) {
			t.Fatalf("%q (%d bytes) gives %d bytes", data, len(data), len(whole))
		}
		s := string(whole)
		for i, r := range s {
			switch {
			case r == '\r' && (i == 0 || i == len(s)-1 || s[i-1] == '\n' || s[i+1] == '\n' || s[i+1] == '\r'):
				t.Fatalf("%q gives %q: a carriage return not between two visible parts of a line", data, s)
			case r == '\n' || r == '\t' || r == '\r':
			case r < 0x20 || 0x7f <= r && r <= 0x9f:
				t.Fatalf("%q gives %q, holding control character %U", data, s, r)
			}
		}
	})
}

// FuzzDeriveFolderName checks the derived name's promises on any URL: it
// is refused with an Invalid error, or it passes the FolderName rule, is
// the URL's last part (it never holds '/' or ':'), and is never "." or
// "..".
func FuzzDeriveFolderName(f *testing.F) {
	for _, s := range []string{
		"git@github.com:me/uatu.git", "https://github.com/me/uatu.git/", "/local/path/repo", "…/repo?x",
		"///", "..", "https://github.com/org/.github", "host:", "re\u200bpo", "/srv/r.git.git",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		name, err := clone.DeriveFolderName(url)
		if err != nil {
			if hub.KindOf(err) != hub.Invalid || name != "" {
				t.Fatalf("DeriveFolderName(%q) = %q, %v: not an Invalid refusal", url, name, err)
			}
			return
		}
		if err := hub.CheckFolderName("folderName", name); err != nil {
			t.Fatalf("DeriveFolderName(%q) = %q, which the FolderName rule refuses: %v", url, name, err)
		}
		if name == "." || name == ".." || strings.ContainsAny(name, "/:") || !strings.Contains(url, name) {
			t.Fatalf("DeriveFolderName(%q) = %q: not the URL's last part", url, name)
		}
	})
}

// FuzzScrub checks the scrubber's promises on any inputs, output and
// split: no secret (a line of an input of at least MinScrubBytes) appears
// in the text, the text of the chunks is the text of the whole, and the
// text only ever loses bytes (it is a subsequence of the output).
func FuzzScrub(f *testing.F) {
	f.Add("hunter22", "Password: hunter22\n", []byte{3})
	f.Add("split-response", "got split-response!", []byte{9})
	f.Add("abcd\ncdef", "ababcdcdxabcdefy", []byte{1})
	f.Add("pässwörd", "p\xc3\xa4sswörd", []byte{1, 2})
	f.Fuzz(func(t *testing.T, inputs, data string, sizes []byte) {
		run := func(parts [][]byte) []byte {
			var sc clone.Scrubber
			sc.Add(inputs)
			var out []byte
			for _, p := range parts {
				out = sc.Write(out, p)
			}
			return sc.Flush(out)
		}
		whole := run([][]byte{[]byte(data)})
		split := run(chunks([]byte(data), sizes))
		if !bytes.Equal(whole, split) {
			t.Fatalf("split %q gives %q, whole gives %q", chunks([]byte(data), sizes), split, whole)
		}
		for _, s := range strings.FieldsFunc(inputs, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(s) >= clone.MinScrubBytes && bytes.Contains(whole, []byte(s)) {
				t.Fatalf("scrubbing %q of %q leaves it in %q", s, data, whole)
			}
		}
		rest := whole
		for i := 0; i < len(data) && len(rest) > 0; i++ {
			if data[i] == rest[0] {
				rest = rest[1:]
			}
		}
		if len(rest) > 0 {
			t.Fatalf("scrubbing %q gives %q, which adds to it", data, whole)
		}
	})
}
