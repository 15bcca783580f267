package chat_test

import (
	"testing"

	"github.com/wharfhub/wharf/hub/chat"
)

// A conversation cursor comes from a client, through the Hub: whatever
// text it is, ParseCursor never panics, and what it accepts is a position
// (a generation, a sequence not below zero) whose own text parses back to
// it.
func FuzzParseCursor(f *testing.F) {
	for _, seed := range []string{
		chat.Cursor{Generation: "g1", Sequence: 0}.String(), chat.Cursor{Generation: "g", Sequence: 1 << 40}.String(),
		"eyJ2IjoxLCJnIjoiZyIsInMiOi0xfQ", "eyJ2IjoyLCJnIjoiZyIsInMiOjF9", "", "!!", "e30", "bnVsbA",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := chat.ParseCursor(s)
		if err != nil {
			return
		}
		if c.Generation == "" || c.Sequence < 0 {
			t.Fatalf("%q accepted as %+v", s, c)
		}
		back, err := chat.ParseCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("%q: %+v encodes as %q, which parses as %+v (%v)", s, c, c.String(), back, err)
		}
	})
}
