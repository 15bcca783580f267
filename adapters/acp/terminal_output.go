package acp

import (
	"strings"
	"unicode/utf8"
)

// output keeps the last limit bytes a terminal's command wrote. It grows
// with the output up to limit, then overwrites its oldest bytes: a write
// copies only what it keeps of its own bytes, never the whole buffer, and
// the buffer never holds more than limit.
type output struct {
	buf     []byte // len grows to limit; at limit the buffer is a ring
	limit   int
	next    int  // once full: where the next byte goes, the oldest byte
	full    bool // the buffer wraps
	dropped bool // bytes were overwritten or never kept
}

func newOutput(limit int) *output { return &output{limit: limit} }

// Write keeps p's end.
func (o *output) Write(p []byte) {
	if len(p) >= o.limit {
		o.dropped = o.dropped || len(p) > o.limit || len(o.buf) > 0
		o.grow(o.limit)
		o.buf = o.buf[:o.limit]
		copy(o.buf, p[len(p)-o.limit:])
		o.next, o.full = 0, true
		return
	}
	if !o.full {
		n := min(len(p), o.limit-len(o.buf))
		o.grow(len(o.buf) + n)
		o.buf = append(o.buf, p[:n]...)
		p = p[n:]
		if len(o.buf) < o.limit {
			return
		}
		o.full, o.next = true, 0
	}
	if len(p) == 0 {
		return
	}
	o.dropped = true
	n := copy(o.buf[o.next:], p)
	copy(o.buf, p[n:])
	o.next = (o.next + len(p)) % o.limit
}

// grow makes room for n bytes, doubling up to limit and never beyond.
func (o *output) grow(n int) {
	if n <= cap(o.buf) {
		return
	}
	c := min(max(n, 2*cap(o.buf), 4096), o.limit)
	buf := make([]byte, len(o.buf), c)
	copy(buf, o.buf)
	o.buf = buf
}

// Len is how many bytes are kept.
func (o *output) Len() int { return len(o.buf) }

// Tail returns the last n bytes kept (all of them when n >= Len), starting
// at a character boundary, and whether anything before them is missing.
func (o *output) Tail(n int) (string, bool) {
	n = min(n, len(o.buf))
	cut := o.dropped || n < len(o.buf)
	var b strings.Builder
	b.Grow(n)
	// The logical order is buf[next:] then buf[:next] (next is 0 until the
	// buffer wraps); take the last n bytes of it.
	older, newer := o.buf[o.next:], o.buf[:o.next]
	if !o.full {
		older, newer = o.buf, nil
	}
	if skip := len(older) + len(newer) - n; skip < len(older) {
		b.Write(older[skip:])
		b.Write(newer)
	} else {
		b.Write(newer[skip-len(older):])
	}
	s := b.String()
	if cut {
		// A character cut in two loses its first bytes; drop the rest of
		// it, as ACP asks.
		for i := 0; i < len(s) && i < utf8.UTFMax; i++ {
			if utf8.RuneStart(s[i]) {
				return s[i:], true
			}
		}
	}
	return s, cut
}
