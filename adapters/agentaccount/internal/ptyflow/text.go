package ptyflow

// maxSequence bounds a control sequence: a longer one is taken to have
// ended, and what follows is text again, so a sequence that never ends
// cannot hide the rest of the output.
const maxSequence = 4096

// cleanState is where a Cleaner is in its input.
type cleanState uint8

const (
	ground   cleanState = iota // text
	escape                     // after ESC
	escInter                   // ESC and intermediate bytes, before the final one
	csi                        // ESC [ …, up to a final byte
	str                        // OSC, DCS, SOS, PM or APC: up to BEL or ESC \
	strEsc                     // ESC inside a string: \ ends it
)

// Cleaner removes a terminal's control sequences and control characters
// from a program's output, chunk by chunk (a sequence may span chunks),
// leaving what a person reads: printable characters (UTF-8 passes
// through), tabs and line ends (\r, \n). The zero value is ready.
type Cleaner struct {
	state cleanState
	n     int // bytes of the current sequence
}

// Append appends the text of p to dst and returns it.
func (c *Cleaner) Append(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		b := p[i]
		if c.state != ground {
			c.n++
			if c.n > maxSequence {
				c.state, c.n = ground, 0
			}
		}
		switch c.state {
		case ground:
			switch {
			case b == 0x1b:
				c.state, c.n = escape, 0
			case b == '\n' || b == '\r' || b == '\t':
				dst = append(dst, b)
			case b < 0x20 || b == 0x7f:
				// another control character: nothing to read
			default:
				dst = append(dst, b)
			}
		case escape:
			switch {
			case b == '[':
				c.state = csi
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.state = str
			case b >= 0x20 && b <= 0x2f:
				c.state = escInter
			case b == 0x1b:
				// ESC ESC: the first was alone
			default:
				c.state = ground
			}
		case escInter:
			if b < 0x20 || b > 0x2f {
				c.state = ground
			}
		case csi:
			switch {
			case b >= 0x40 && b <= 0x7e:
				c.state = ground
			case b == 0x1b:
				c.state, c.n = escape, 0
			}
		case str:
			switch b {
			case 0x07:
				c.state = ground
			case 0x1b:
				c.state = strEsc
			}
		case strEsc:
			if b == '\\' {
				c.state = ground
			} else {
				// ESC then something else: the string ended, a new
				// sequence begins with this byte.
				c.state, c.n = escape, 0
				i--
			}
		}
	}
	return dst
}
