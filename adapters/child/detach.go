package child

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// presence is whether a Hub holds the child, and so when the child stops
// for want of one (childproto's hold.go). Without a detach grace, the end
// of stdin is the Hub gone at once (the first protocol). With one, stdin's
// StopLine is the Hub's polite stop, and the child is gone once it has had
// neither stdin nor a hold for the whole grace: every change of the two
// re-decides, under one lock, whether the grace runs.
type presence struct {
	grace time.Duration
	// after runs f once d has passed, unless the returned stop is called
	// first (time.AfterFunc; tests give their own).
	after func(d time.Duration, f func()) (stop func() bool)

	stopAsked chan struct{} // closed when the Hub wrote StopLine
	gone      chan struct{} // closed when no Hub is left to wait for

	mu        sync.Mutex
	stdinOpen bool
	holds     int         // GETs of HoldPath being served
	timer     func() bool // stops the running grace; nil when none runs
	ended     bool        // gone is closed
}

// newPresence reads stdin (nil: a Hub that never goes) in the
// background; grace 0 is the first protocol.
func newPresence(stdin io.Reader, grace time.Duration) *presence {
	p := &presence{grace: grace, stdinOpen: true,
		stopAsked: make(chan struct{}), gone: make(chan struct{}),
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
	if stdin != nil {
		go p.readStdin(stdin)
	}
	return p
}

// maxStdinLine bounds a line the child reads from stdin; the Hub writes
// one, StopLine.
const maxStdinLine = 64

// readStdin reads stdin to its end: the first protocol discards it; with
// a grace, StopLine asks for the stop and anything else is ignored.
func (p *presence) readStdin(stdin io.Reader) {
	if p.grace <= 0 {
		_, _ = io.Copy(io.Discard, stdin)
		p.end()
		return
	}
	br := bufio.NewReaderSize(stdin, maxStdinLine)
	for {
		line, err := br.ReadSlice('\n')
		if err == nil && string(line) == childproto.StopLine {
			closeOnce(&p.mu, p.stopAsked)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	p.mu.Lock()
	p.stdinOpen = false
	p.decide()
	p.mu.Unlock()
}

// serveHold is the handler of HoldPath: 200 at once, then nothing until
// the child stops (the request's context, from the server's base) or the
// Hub goes away. A child without a grace has nothing to hold: 404.
func (p *presence) serveHold(w http.ResponseWriter, r *http.Request) {
	if p.grace <= 0 {
		childproto.WriteError(w, http.StatusNotFound, "not found")
		return
	}
	p.mu.Lock()
	p.holds++
	p.decide()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.holds--
		p.decide()
		p.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-r.Context().Done()
}

// decide starts the grace when no Hub holds the child and none runs,
// and stops it when one does. p.mu is held.
func (p *presence) decide() {
	held := p.stdinOpen || p.holds > 0
	switch {
	case p.ended:
	case held && p.timer != nil:
		p.timer()
		p.timer = nil
	case !held && p.timer == nil:
		p.timer = p.after(p.grace, p.end)
	}
}

// end closes gone, once.
func (p *presence) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended {
		p.ended = true
		close(p.gone)
	}
}

// why is the log line of the Hub gone, by protocol.
func (p *presence) why() string {
	if p.grace <= 0 {
		return "stopping: stdin closed, the Hub is gone"
	}
	return "stopping: no Hub came back within " + p.grace.String() + " of the last one leaving"
}

// closeOnce closes ch unless it is closed, under mu.
func closeOnce(mu *sync.Mutex, ch chan struct{}) {
	mu.Lock()
	defer mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}
