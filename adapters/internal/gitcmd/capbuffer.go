package gitcmd

// capBuffer is an io.Writer that keeps at most max bytes: the first ones,
// or the last ones when keepTail is set. Writes always succeed, so the
// copying goroutine keeps draining the pipe and git never blocks on it.
type capBuffer struct {
	max      int
	keepTail bool
	buf      []byte
	total    int64
}

// Write keeps what fits and reports every byte as written.
func (b *capBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if !b.keepTail {
		if room := b.max - len(b.buf); room > 0 {
			b.buf = append(b.buf, p[:min(room, len(p))]...)
		}
		return len(p), nil
	}
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max { // compact now and then, not on every write
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// Bytes returns the kept bytes.
func (b *capBuffer) Bytes() []byte {
	if len(b.buf) > b.max {
		return b.buf[len(b.buf)-b.max:]
	}
	return b.buf
}

// Truncated reports whether bytes were dropped.
func (b *capBuffer) Truncated() bool { return b.total > int64(len(b.Bytes())) }
