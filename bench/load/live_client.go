package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the live workloads' client: a Server-Sent Events reader on
// a raw TCP connection (http.ReadResponse decodes the chunked body; no
// client goroutine besides the reader itself), and the parsing of the
// envelopes it reads, done without decoding their payloads.

// sseFrame is one frame of an event stream: a comment or an event. Its
// slices are valid until the next call to next.
type sseFrame struct {
	Comment []byte // the comment's text without ": ", nil for an event
	Event   []byte
	Data    []byte
}

// sseReader reads frames from an event stream.
type sseReader struct {
	br      *bufio.Reader
	event   []byte
	data    []byte
	comment []byte
	long    []byte // a line longer than br's buffer, assembled
}

// line returns the next line without its "\n", assembling one longer than
// the buffer.
func (r *sseReader) line() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == nil {
		return b[:len(b)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	r.long = append(r.long[:0], b...)
	for {
		b, err = r.br.ReadSlice('\n')
		r.long = append(r.long, b...)
		switch {
		case err == nil:
			return r.long[:len(r.long)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// next reads up to the blank line that ends a frame.
func (r *sseReader) next() (sseFrame, error) {
	r.event, r.data, r.comment = r.event[:0], r.data[:0], r.comment[:0]
	isComment, any := false, false
	for {
		l, err := r.line()
		if err != nil {
			return sseFrame{}, err
		}
		switch {
		case len(l) == 0:
			if !any {
				continue
			}
			if isComment {
				return sseFrame{Comment: r.comment}, nil
			}
			return sseFrame{Event: r.event, Data: r.data}, nil
		case l[0] == ':':
			isComment = true
			r.comment = append(r.comment, bytes.TrimPrefix(l[1:], []byte(" "))...)
		case bytes.HasPrefix(l, []byte("event: ")):
			r.event = append(r.event, l[7:]...)
		case bytes.HasPrefix(l, []byte("data: ")):
			r.data = append(r.data, l[6:]...)
		}
		any = true
	}
}

// liveConn is one open live stream.
type liveConn struct {
	conn net.Conn
	rd   *sseReader
	ID   string        // the hello's streamId
	Open time.Duration // from the dial's start to `: open`
	Helo time.Duration // from the dial's start to hello
}

// openTimeout bounds a stream's opening: the dial, the answer's head and
// the first two frames.
const openTimeout = 15 * time.Second

// dialLive opens GET pathQuery on hostPort with header and reads the
// stream's opening (`: open`, then hello). wrap, when not nil, wraps the
// connection (the slow reader's throttle).
func dialLive(ctx context.Context, hostPort, pathQuery string, header http.Header, wrap func(net.Conn) net.Conn) (*liveConn, error) {
	t0 := time.Now()
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", hostPort)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(t0.Add(openTimeout))
	c := &liveConn{conn: conn}
	fail := func(err error) (*liveConn, error) {
		conn.Close()
		return nil, err
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+hostPort+pathQuery, nil)
	if err != nil {
		return fail(err)
	}
	req.Header = header.Clone()
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	var rc net.Conn = conn
	if wrap != nil {
		rc = wrap(conn)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(rc, 4096), req)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fail(fmt.Errorf("live stream: %s: %s", resp.Status, bytes.TrimSpace(b)))
	}
	c.rd = &sseReader{br: bufio.NewReaderSize(resp.Body, 4096)}
	f, err := c.rd.next()
	if err != nil || string(f.Comment) != "open" {
		return fail(fmt.Errorf("live stream: first frame %q %q, %v", f.Comment, f.Event, err))
	}
	c.Open = time.Since(t0)
	f, err = c.rd.next()
	if err != nil || string(f.Event) != "hello" {
		return fail(fmt.Errorf("live stream: second frame %q %q, %v", f.Comment, f.Event, err))
	}
	c.Helo = time.Since(t0)
	c.ID = string(jsonString(f.Data, "streamId"))
	if c.ID == "" {
		return fail(fmt.Errorf("live stream: hello without a streamId: %q", f.Data))
	}
	conn.SetDeadline(time.Time{})
	return c, nil
}

// next returns the stream's next frame.
func (c *liveConn) next() (sseFrame, error) { return c.rd.next() }

// Close closes the connection; a reader blocked in next returns an error.
func (c *liveConn) Close() { c.conn.Close() }

// liveEnv is what the workloads read of a LiveEnvelope. Its slices point
// into the frame.
type liveEnv struct {
	WS, Topic, Cursor, Kind []byte
	Epoch                   []byte // the cursor up to its last '.'
	Seq                     int64  // the number after it; -1 when there is none
	Data                    []byte // the payload, nil when none
}

// parseEnvelope reads a LiveEnvelope as the Hub writes it: ws, topic, key,
// cursor and event in that order, the payload last. It reports false for
// anything else.
func parseEnvelope(b []byte) (liveEnv, bool) {
	e := liveEnv{Seq: -1}
	e.WS = jsonString(b, "ws")
	e.Topic = jsonString(b, "topic")
	e.Cursor = jsonString(b, "cursor")
	i := bytes.Index(b, []byte(`"event":{"kind":"`))
	if e.WS == nil || e.Topic == nil || e.Cursor == nil || i < 0 {
		return e, false
	}
	rest := b[i+len(`"event":{"kind":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return e, false
	}
	e.Kind = rest[:j]
	rest = rest[j+1:]
	if d, ok := bytes.CutPrefix(rest, []byte(`,"data":`)); ok {
		if !bytes.HasSuffix(d, []byte("}}")) {
			return e, false
		}
		e.Data = d[:len(d)-2]
	}
	if k := bytes.LastIndexByte(e.Cursor, '.'); k >= 0 {
		e.Epoch = e.Cursor[:k]
		if n, err := strconv.ParseInt(string(e.Cursor[k+1:]), 10, 64); err == nil {
			e.Seq = n
		}
	}
	return e, true
}

// jsonString returns the value of the first string member name of the
// JSON text b (without unescaping), or nil. It is for the Hub's envelopes
// and the benchmark's payloads, whose strings hold no escaped quote.
func jsonString(b []byte, name string) []byte {
	key := []byte(`"` + name + `":"`)
	i := bytes.Index(b, key)
	if i < 0 {
		return nil
	}
	rest := b[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil
	}
	return rest[:j]
}

// jsonInt returns the value of the first integer member name of b, or -1.
func jsonInt(b []byte, name string) int64 {
	key := []byte(`"` + name + `":`)
	i := bytes.Index(b, key)
	if i < 0 {
		return -1
	}
	rest := b[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// openMany runs open(i) for i in [0, n) from at most conc goroutines and
// returns the first error.
func openMany(ctx context.Context, n, conc int, open func(i int) error) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range min(conc, n) {
		wg.Go(func() {
			for i := range next {
				if err := open(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("stream %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// throttled reads from a connection at most rate bytes a second, in reads
// of at most a quarter of it: the W7 slow reader.
type throttled struct {
	net.Conn
	rate  int
	start time.Time
	read  int
	total atomic.Int64 // read, for other goroutines
}

func (t *throttled) Read(p []byte) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	allowed := time.Duration(float64(t.read) / float64(t.rate) * float64(time.Second))
	if d := allowed - time.Since(t.start); d > 0 {
		time.Sleep(d)
	}
	n, err := t.Conn.Read(p[:min(len(p), t.rate/4)])
	t.read += n
	t.total.Add(int64(n))
	return n, err
}
