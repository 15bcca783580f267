package shells

// ring keeps the last len(buf) bytes of a shell's output, addressed by
// absolute offsets: the first byte the shell ever wrote is offset 0, and
// the ring holds [start, head). It is not safe for concurrent use; the
// shell's lock guards it.
type ring struct {
	buf   []byte
	start int64 // the oldest offset held
	head  int64 // the offset of the next byte written
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

// write appends p, overwriting the oldest bytes past the ring's size.
func (r *ring) write(p []byte) {
	size := int64(len(r.buf))
	if int64(len(p)) > size {
		r.head += int64(len(p)) - size
		p = p[int64(len(p))-size:]
	}
	at := int(r.head % size)
	n := copy(r.buf[at:], p)
	copy(r.buf, p[n:])
	r.head += int64(len(p))
	r.start = max(r.start, r.head-size)
}

// room is how many bytes may be written before the byte at offset from
// would be overwritten.
func (r *ring) room(from int64) int64 { return from + int64(len(r.buf)) - r.head }

// read copies into p the bytes from offset off (start <= off <= head),
// as many as fit, and returns how many.
func (r *ring) read(p []byte, off int64) int {
	if off < r.start || off > r.head {
		return 0
	}
	size := int64(len(r.buf))
	n := int(min(int64(len(p)), r.head-off))
	at := int(off % size)
	c := copy(p[:n], r.buf[at:])
	copy(p[c:n], r.buf)
	return n
}
