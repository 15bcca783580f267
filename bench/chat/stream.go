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
	"slices"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// The one stream client, the same for Wharf and for the probe, and the
// probe: a minimal SSE fan-out.

// stream is one open live stream, read by one goroutine that notes the
// conversation's `ready` and the time each pace chunk's envelope is read.
type stream struct {
	cancel context.CancelFunc
	ready  chan struct{} // closed at the conversation's ready
	done   chan struct{} // closed once the reader has returned
	err    error         // why it returned; read after done

	mu       sync.Mutex // guards what follows
	lat      []time.Duration
	next     int    // the sequence the next chunk should carry
	disorder int    // chunks read out of order (or twice)
	tmpl     []byte // a text delta's envelope, the probe's payload
}

// sourceClient is an HTTP client whose connections leave from ip (any
// 127.0.0.0/8 address): the daemon caps connections per client address.
// Each request has a connection of its own.
func sourceClient(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true, DisableCompression: true}}
}

// openStream sends GET path (a live stream's, relative to c.Base) and
// reads it until closed; it returns once the answer's headers arrived.
func openStream(ctx context.Context, c *daemontest.Client, path string) (*stream, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &stream{cancel: cancel, ready: make(chan struct{}), done: make(chan struct{})}
	octx, stop := context.WithTimeout(ctx, 15*time.Second)
	defer stop()
	unbound := context.AfterFunc(octx, cancel) // the opening is bounded, the stream is not
	resp, err := c.Request(sctx, "GET", path, nil)
	if !unbound() && err == nil {
		err = fmt.Errorf("opening the stream: %w", octx.Err())
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		err = fmt.Errorf("live stream: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
		return nil, err
	}
	go s.read(resp.Body)
	return s, nil
}

func (s *stream) read(body io.ReadCloser) {
	defer close(s.done)
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	var long []byte
	readied := false
	for {
		line, err := br.ReadSlice('\n')
		for long = long[:0]; errors.Is(err, bufio.ErrBufferFull); line, err = br.ReadSlice('\n') {
			long = append(long, line...)
		}
		if err != nil {
			s.err = err
			return
		}
		if len(long) > 0 {
			line = append(long, line...)
		}
		if !bytes.HasPrefix(line, []byte("data: ")) || !bytes.Contains(line, []byte(`"topic":"conversation"`)) {
			continue
		}
		now := time.Now()
		if seq, sent, ok := agentscript.ParsePaceChunk(line); ok {
			s.note(seq, now.Sub(time.Unix(0, sent)), line)
		} else if !readied && bytes.Contains(line, []byte(`"kind":"ready"`)) {
			readied = true
			close(s.ready)
		}
	}
}

func (s *stream) note(seq int, lat time.Duration, line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lat = append(s.lat, lat)
	if seq != s.next {
		s.disorder++
	}
	s.next = seq + 1
	if s.tmpl == nil && bytes.Contains(line, []byte(`"type":"item.text_delta"`)) {
		s.tmpl = bytes.Clone(bytes.TrimSpace(bytes.TrimPrefix(line, []byte("data: "))))
	}
}

// reset forgets the chunks read so far, before a new turn.
func (s *stream) reset() {
	s.mu.Lock()
	s.lat, s.next, s.disorder = nil, 0, 0
	s.mu.Unlock()
}

// taken is what the stream read since its reset.
func (s *stream) taken() (lat []time.Duration, disorder int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lat), s.disorder
}

func (s *stream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lat)
}

func (s *stream) close() {
	s.cancel()
	<-s.done
}

// waitReady waits (up to 15 s) for every stream's ready.
func waitReady(ctx context.Context, ss []*stream) error {
	limit := time.After(15 * time.Second)
	for i, s := range ss {
		select {
		case <-s.ready:
		case <-s.done:
			return fmt.Errorf("stream %d ended before its ready: %v", i, s.err)
		case <-limit:
			return fmt.Errorf("stream %d: no ready within 15 s", i)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitChunks waits until every stream read n chunks, or until limit.
func waitChunks(ctx context.Context, ss []*stream, n int, limit time.Time) {
	for time.Now().Before(limit) && ctx.Err() == nil {
		all := true
		for _, s := range ss {
			all = all && s.count() >= n
		}
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func closeAll(ss []*stream) {
	for _, s := range ss {
		if s != nil {
			s.close()
		}
	}
}

// probe is the baseline: a minimal SSE fan-out on its own listener. A
// handler per stream (GET /live?key=K) writes `: open`, the hello and the
// conversation's ready, then drains its queue, writing what is queued in
// one go; publish queues an envelope, already encoded, for key's streams.
type probe struct {
	mu   sync.Mutex
	subs map[string][]chan []byte
}

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, q := r.URL.Query().Get("key"), make(chan []byte, 4096)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	io.WriteString(w, ": open\n\nevent: hello\ndata: {\"streamId\":\"probe\"}\n\n"+
		`event: live`+"\ndata: "+`{"ws":"probe","topic":"conversation","key":"`+key+`","cursor":"probe.0","event":{"kind":"ready"}}`+"\n\n")
	if rc.Flush() != nil {
		return
	}
	p.mu.Lock()
	p.subs[key] = append(p.subs[key], q)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.subs[key] = slices.DeleteFunc(p.subs[key], func(c chan []byte) bool { return c == q })
		p.mu.Unlock()
	}()
	var buf []byte
	for {
		select {
		case env := <-q:
			for more := true; more; {
				buf = append(append(append(buf, "event: live\ndata: "...), env...), "\n\n"...)
				select {
				case env = <-q:
				default:
					more = false
				}
			}
			if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
				return
			}
			buf = buf[:0]
		case <-r.Context().Done():
			return
		}
	}
}

func (p *probe) publish(key string, env []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.subs[key] {
		select {
		case q <- env:
		default: // a full queue drops, which the order check reports
		}
	}
}

// withChunk is tmpl, an envelope carrying a pace chunk, carrying chunk
// instead.
func withChunk(tmpl []byte, chunk string) []byte {
	i := bytes.Index(tmpl, []byte("[p "))
	j := bytes.IndexByte(tmpl[max(i, 0):], ']')
	if i < 0 || j < 0 {
		return tmpl
	}
	return slices.Concat(tmpl[:i], []byte(chunk), tmpl[i+j+1:])
}
