package clone

import (
	"unicode/utf8"
)

// MaxStringSequenceBytes bounds an OSC, DCS, SOS, PM or APC string the
// normalizer drops: past it the sequence is taken as unterminated and
// what follows is text again, so a stray ESC ] cannot hide every later
// prompt.
const MaxStringSequenceBytes = 4096

type escState uint8

const (
	ground    escState = iota
	escape             // after ESC
	escInter           // ESC, then intermediate bytes
	csi                // ESC [
	str                // ESC ] (OSC), ESC P, X, ^ or _: a string until BEL or ST
	strEscape          // ESC inside a string: ST (ESC \) or a new sequence
)

// Normalizer turns a terminal's raw bytes into the clean text of a job's
// output events, a chunk at a time, keeping what it needs between chunks
// (an escape sequence's state, at most 3 bytes of an incomplete UTF-8
// sequence, a pending carriage return), so the text does not depend on
// where the chunks split: feeding any split of a stream gives the text of
// feeding it whole. The text is valid UTF-8 holding
//
//   - what the program printed, escape sequences (CSI, OSC ended by BEL
//     or ST, DCS, SOS, PM, APC, and two-byte ESC sequences) removed;
//   - "\n" for a line end (CRLF and LF) and "\t";
//   - "\r" only between two visible parts of one line: "what follows
//     replaces this line", as a terminal shows Git's progress
//     ("Receiving objects:  42%\rReceiving objects: 100%") — a reader
//     keeps the latest part, so the stream carries what a terminal shows;
//   - U+FFFD for each byte that is not UTF-8;
//
// and no other control character (C0, DEL, C1) nor bidi control, which
// could make a page show a prompt other than the one printed.
type Normalizer struct {
	state     escState
	strLen    int
	partial   [utf8.UTFMax]byte
	npartial  int
	cr        bool // a carriage return waits for what follows it
	lineStart bool // nothing visible since the last line end
}

// NewNormalizer is a normalizer at the start of a stream.
func NewNormalizer() *Normalizer { return &Normalizer{lineStart: true} }

// Write appends the text of the next chunk p to dst and returns it.
func (n *Normalizer) Write(dst, p []byte) []byte {
	data := p
	if n.npartial > 0 {
		data = append(append(make([]byte, 0, n.npartial+len(p)), n.partial[:n.npartial]...), p...)
		n.npartial = 0
	}
	for i := 0; i < len(data); {
		b := data[i]
		switch n.state {
		case ground:
			if b >= utf8.RuneSelf {
				if !utf8.FullRune(data[i:]) {
					n.npartial = copy(n.partial[:], data[i:])
					return dst
				}
				r, size := utf8.DecodeRune(data[i:])
				dst = n.visible(dst, r)
				i += size
				continue
			}
			dst = n.ground(dst, b)
		case escape:
			switch {
			case b == '[':
				n.state = csi
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				n.state, n.strLen = str, 0
			case 0x20 <= b && b <= 0x2f:
				n.state = escInter
			case 0x30 <= b && b <= 0x7e, b == 0x18, b == 0x1a:
				n.state = ground
			case b == 0x1b:
			default:
				n.state = ground
				continue // a control or non-ASCII byte ends it and counts as itself
			}
		case escInter:
			if 0x20 <= b && b <= 0x2f {
				break
			}
			n.state = ground
			if b > 0x7e || b < 0x30 {
				continue
			}
		case csi:
			switch {
			case 0x20 <= b && b <= 0x3f:
			case 0x40 <= b && b <= 0x7e:
				n.state = ground
			case b == 0x1b:
				n.state = escape
			default:
				n.state = ground
				continue
			}
		case str:
			switch {
			case b == 0x07, b == 0x18, b == 0x1a:
				n.state = ground
			case b == 0x1b:
				n.state = strEscape
			case n.strLen == MaxStringSequenceBytes:
				n.state = ground
				continue // taken as unterminated: this byte is text again
			default:
				n.strLen++
			}
		case strEscape:
			n.state = escape
			if b == '\\' {
				n.state = ground
			} else {
				continue // ESC ended the string and begins a sequence
			}
		}
		i++
	}
	return dst
}

// ground handles an ASCII byte outside any escape sequence.
func (n *Normalizer) ground(dst []byte, b byte) []byte {
	switch {
	case b == 0x1b:
		n.state = escape
	case b == '\n':
		n.cr, n.lineStart = false, true
		dst = append(dst, '\n')
	case b == '\r':
		n.cr = true
	case b == '\t' || 0x20 <= b && b < 0x7f:
		dst = n.visible(dst, rune(b))
	}
	return dst // other C0 controls and DEL are dropped
}

// visible appends a character that shows, after the carriage return
// waiting before it, if any; C1 and bidi controls are dropped.
func (n *Normalizer) visible(dst []byte, r rune) []byte {
	if 0x80 <= r && r <= 0x9f || isBidiControl(r) {
		return dst
	}
	if n.cr && !n.lineStart {
		dst = append(dst, '\r')
	}
	n.cr, n.lineStart = false, false
	return utf8.AppendRune(dst, r)
}

// Flush ends the stream and appends what remains: U+FFFD for each byte of
// an incomplete UTF-8 sequence. A carriage return with nothing after it
// and an unterminated escape sequence show nothing, so they are dropped.
func (n *Normalizer) Flush(dst []byte) []byte {
	for range n.npartial {
		dst = n.visible(dst, utf8.RuneError)
	}
	*n = Normalizer{lineStart: true}
	return dst
}

// isBidiControl reports the characters that reorder displayed text
// (Unicode's Bidi_Control property).
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069
}
