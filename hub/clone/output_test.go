package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/clone"
)

// normalize feeds chunks to a new normalizer and flushes it.
func normalize(chunks ...string) string {
	n := clone.NewNormalizer()
	var out []byte
	for _, c := range chunks {
		out = n.Write(out, []byte(c))
	}
	return string(n.Flush(out))
}

// TestTerminalOutputBecomesCleanText copies research §11.4's output rules
// (escape sequences dropped, control characters dropped but for newline
// and tab, UTF-8 decoded as a stream) with the change to carriage
// returns: a progress line is replaced by the next, not repeated.
func TestTerminalOutputBecomesCleanText(t *testing.T) {
	for _, tc := range []struct {
		row    string
		chunks []string
		want   string
	}{
		{"plain text", []string{"Cloning into 'uatu'...\n"}, "Cloning into 'uatu'...\n"},
		{"CRLF is a line end", []string{"a\r\nb\r\n"}, "a\nb\n"},
		{"progress replaces its line", []string{"Receiving objects:  10% (1/10)\rReceiving objects: 100% (10/10), done.\r\n"},
			"Receiving objects:  10% (1/10)\rReceiving objects: 100% (10/10), done.\n"},
		{"repeated carriage returns are one", []string{"a\r\r\rb"}, "a\rb"},
		{"a carriage return before a line end is none", []string{"a\r\r\nb"}, "a\nb"},
		{"a carriage return at a line's start is none", []string{"\rabc\n\rdef"}, "abc\ndef"},
		{"a trailing carriage return shows nothing", []string{"abc\r"}, "abc"},
		{"erase-line then return", []string{"50%\x1b[K\r60%"}, "50%\r60%"},
		{"CSI colours", []string{"\x1b[1;31mred\x1b[0m"}, "red"},
		{"CSI with private parameters", []string{"\x1b[?25lhidden cursor\x1b[?25h"}, "hidden cursor"},
		{"OSC ended by BEL", []string{"\x1b]0;title\x07text"}, "text"},
		{"OSC ended by ST (a hyperlink)", []string{"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\"}, "link"},
		{"DCS", []string{"\x1bPq#0;2;0;0;0\x1b\\after"}, "after"},
		{"APC, PM and SOS", []string{"\x1b_a\x1b\\\x1b^b\x1b\\\x1bXc\x1b\\d"}, "d"},
		{"two-byte ESC sequences", []string{"\x1b=\x1b>\x1b7\x1b8text"}, "text"},
		{"a character-set designation", []string{"\x1b(Btext"}, "text"},
		{"CAN cancels a sequence", []string{"\x1b[12\x18text"}, "text"},
		{"ESC inside a sequence begins another", []string{"\x1b[12\x1b[31mtext"}, "text"},
		{"a control byte ends a sequence and counts", []string{"\x1b[1\nx"}, "\nx"},
		{"an ESC in a string without ST begins a sequence", []string{"\x1b]0;t\x1b[31mx"}, "x"},
		{"C0 controls and DEL are dropped", []string{"a\x00b\x07c\x08d\x7fe\x0bf\x0cg"}, "abcdefg"},
		{"tab is kept", []string{"a\tb"}, "a\tb"},
		{"C1 controls are dropped", []string{"a\u0085b\u009bc"}, "abc"},
		{"a raw 8-bit CSI is not UTF-8", []string{"a\x9b31mb"}, "a\uFFFD31mb"},
		{"invalid UTF-8 becomes U+FFFD", []string{"a\xffb\xc3("}, "a\uFFFDb\uFFFD("},
		{"bidi controls are dropped", []string{"\u202eabc\u2066d\u200f"}, "abcd"},
		{"other text is kept", []string{"héllo wörld € 🚀 \u200b"}, "héllo wörld € 🚀 \u200b"},
		{"an unterminated OSC is bounded", []string{"\x1b]" + strings.Repeat("x", clone.MaxStringSequenceBytes) + "Password: "}, "Password: "},
		{"an unterminated sequence at the end shows nothing", []string{"done\x1b[12"}, "done"},
		// Split across chunks.
		{"a CSI split", []string{"\x1b[3", "1mred"}, "red"},
		{"an ESC alone at a chunk's end", []string{"a\x1b", "[0mb"}, "ab"},
		{"an ST split", []string{"\x1b]0;t\x1b", "\\x"}, "x"},
		{"a rune split", []string{"\xe2\x82", "\xac"}, "€"},
		{"a rune split three ways", []string{"\xf0", "\x9f\x9a", "\x80"}, "🚀"},
		{"a CRLF split", []string{"a\r", "\nb"}, "a\nb"},
		{"a progress return split", []string{"10%\r", "20%"}, "10%\r20%"},
		{"an incomplete rune at the end", []string{"a\xe2\x82"}, "a\uFFFD\uFFFD"},
		{"an incomplete rune then ASCII", []string{"a\xe2", "b"}, "a\uFFFDb"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			is.Equal(normalize(tc.chunks...), tc.want)                // chunk by chunk
			is.Equal(normalize(strings.Join(tc.chunks, "")), tc.want) // and whole
		})
	}
}

func TestAFlushedNormalizerStartsAStreamAfresh(t *testing.T) {
	is := is.New(t)
	n := clone.NewNormalizer()
	out := n.Write(nil, []byte("a\x1b]0;"))
	out = n.Flush(out)
	out = n.Write(out, []byte("\rb"))
	is.Equal(string(out), "ab") // no sequence and no line carried over
}
