package daemontest

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// output is a goroutine-safe writer that keeps everything written, copies
// it to tee when set, and lets a reader wait for content. A process's
// stdout and stderr are each copied by one goroutine, so writes to one
// output never interleave.
type output struct {
	tee     io.Writer
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newOutput(tee io.Writer) *output {
	return &output{tee: tee, changed: make(chan struct{})}
}

// Write keeps p and copies it to the tee; a failing tee is not the
// daemon's problem and does not stop the copy.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.buf.Write(p)
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
	if o.tee != nil {
		_, _ = o.tee.Write(p)
	}
	return len(p), nil
}

// String returns everything written so far.
func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor returns the output once ok accepts it, or fails when ctx ends
// or done is closed first (the writer will write no more).
func (o *output) waitFor(ctx context.Context, done <-chan struct{}, ok func(string) bool) (string, error) {
	for {
		o.mu.Lock()
		s, changed := o.buf.String(), o.changed
		o.mu.Unlock()
		if ok(s) {
			return s, nil
		}
		select {
		case <-changed:
		case <-done:
			// The process has exited and its pipes are drained (Wait
			// returned): one last look, then give up.
			if s := o.String(); ok(s) {
				return s, nil
			}
			return o.String(), errExited
		case <-ctx.Done():
			return s, context.Cause(ctx)
		}
	}
}
