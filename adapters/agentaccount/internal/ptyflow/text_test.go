package ptyflow_test

import (
	"bytes"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
)

func TestACleanerLeavesTheTextAPersonReads(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"plain text", "visit: https://a.example/x\r\n", "visit: https://a.example/x\r\n"},
		{"colours", "\x1b[1m\x1b[38;5;12mbold\x1b[0m text", "bold text"},
		{"a hyperlink", "\x1b]8;;https://a.example/x\x07https://a.example/x\x1b]8;;\x07\n", "https://a.example/x\n"},
		{"a hyperlink ended by ST", "\x1b]8;;https://h.example\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"the alternate screen and a cursor move", "\x1b[?1049h\x1b[2J\x1b[HPlease\x1b[1G\x1b[0JEnter: \x1b[31G", "PleaseEnter: "},
		{"a title", "\x1b]0;\u2807 Ready\x07Ready", "Ready"},
		{"a character set and a keypad mode", "\x1b(B\x1b=text\x1b>", "text"},
		{"other control characters", "a\x00b\x07c\x08d\x7fe\tf", "abcde\tf"},
		{"UTF-8", "Opening browser to sign in\u2026", "Opening browser to sign in\u2026"},
		{"a CSI cut by ESC", "\x1b[12\x1b[31mred", "red"},
		{"a string cut by another sequence", "\x1b]0;title\x1b[1mbold", "bold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			var cl ptyflow.Cleaner
			is.Equal(string(cl.Append(nil, []byte(c.in))), c.want) // in one piece
			for cut := range len(c.in) + 1 {
				var cl ptyflow.Cleaner
				got := cl.Append(nil, []byte(c.in[:cut]))
				got = cl.Append(got, []byte(c.in[cut:]))
				is.Equal(string(got), c.want) // cut anywhere
			}
		})
	}
}

func TestASequenceThatNeverEndsDoesNotHideTheRest(t *testing.T) {
	is := is.New(t)
	var cl ptyflow.Cleaner
	in := append([]byte("\x1b]8;;"), bytes.Repeat([]byte("x"), 5000)...)
	in = append(in, " after"...)
	got := cl.Append(nil, in)
	is.True(bytes.HasSuffix(got, []byte(" after"))) // the text after the bound is read
	is.True(len(got) < 1000)                        // the sequence's first 4 KiB are not
}

// FuzzCleaner: a Cleaner's text holds no escape or control character but
// tabs and line ends, and does not depend on how the output was cut.
func FuzzCleaner(f *testing.F) {
	f.Add([]byte("\x1b]8;;https://a.example\x07link\x1b]8;;\x07\r\n"), 3)
	f.Add([]byte("\x1b[?1049h\x1b[2J\x1b[HPlease visit"), 7)
	f.Add([]byte("\x1bP1$r\x1b\\\x1b(0q"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		var one ptyflow.Cleaner
		whole := one.Append(nil, in)
		for _, b := range whole {
			if b == 0x1b || b == 0x7f || (b < 0x20 && b != '\t' && b != '\r' && b != '\n') {
				t.Fatalf("control byte %#x left in %q", b, whole)
			}
		}
		if len(in) == 0 {
			return
		}
		cut = (cut%len(in) + len(in)) % len(in)
		var two ptyflow.Cleaner
		pieces := two.Append(nil, in[:cut])
		pieces = two.Append(pieces, in[cut:])
		if !bytes.Equal(whole, pieces) {
			t.Fatalf("cut at %d: %q, whole: %q", cut, pieces, whole)
		}
	})
}
