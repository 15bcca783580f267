package daemontest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
)

// maxRecordedBody bounds the body of one recorded answer that is not a
// stream: the API's answers are far smaller, and a larger one is read no
// further (the client then sees it cut).
const maxRecordedBody = 64 << 20

// Client returns an HTTP client whose every answer is recorded (see
// Transport).
func (s *Secrets) Client() *http.Client { return NewHTTPClient(s.Transport(nil)) }

// Transport returns a RoundTripper that records every answer base gives
// (nil: a new loopback transport): its status line and headers at once,
// its body as the client reads it. A live stream's frames are thus
// recorded as they arrive; any other body is read whole before the client
// gets it, so what the client leaves unread is still scanned. Requests are
// not recorded: they carry the secrets on purpose.
func (s *Secrets) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = &http.Transport{MaxIdleConnsPerHost: 16}
	}
	return &recorder{s: s, base: base}
}

// recorder is the RoundTripper of Transport.
type recorder struct {
	s    *Secrets
	base http.RoundTripper
}

// RoundTrip records the answer: a place for its headers, one for its body.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.s.mu.Lock()
	r.s.answers++
	n := r.s.answers
	r.s.mu.Unlock()
	what := fmt.Sprintf("answer %d (%s %s, %d)", n, req.Method, req.URL.Path, resp.StatusCode)
	head := r.s.add(&place{what: "the headers of " + what, resp: resp})
	fmt.Fprintf(head, "%s\r\n", resp.Status)
	_ = resp.Header.Write(head)
	body := r.s.add(&place{what: "the body of " + what, resp: resp})
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &teeBody{r: io.TeeReader(resp.Body, body), c: resp.Body}
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
	resp.Body.Close()
	body.Write(b)
	// A scenario that asked for gzip itself gets the compressed bytes;
	// what is scanned is what they say.
	if resp.Header.Get("Content-Encoding") == "gzip" && !resp.Uncompressed {
		if zr, zerr := gzip.NewReader(bytes.NewReader(b)); zerr == nil {
			_, _ = io.Copy(body, io.LimitReader(zr, maxRecordedBody))
		}
	}
	resp.Body = &teeBody{r: io.MultiReader(bytes.NewReader(b), errReader{err})}
	return resp, nil
}

// teeBody is a recorded body: reads come from r, Close closes c.
type teeBody struct {
	once sync.Once
	r    io.Reader
	c    io.Closer
}

func (t *teeBody) Read(p []byte) (int, error) { return t.r.Read(p) }

func (t *teeBody) Close() error {
	var err error
	t.once.Do(func() {
		if t.c != nil {
			err = t.c.Close()
		}
	})
	return err
}

// errReader returns err, or io.EOF when err is nil: the end of a body
// read whole, as its first reader met it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
