package childrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// This file is the child's side of the lifecycle: its output, readiness,
// and its end.

// ReadStdout reports the readiness line to AwaitReady (see
// childproto.ReadReady), then discards the rest of r so a child that
// breaks the protocol can never block on a full pipe. Run it in its own
// goroutine; it returns at r's end.
func (s *Session) ReadStdout(r io.Reader) {
	defer close(s.outDone)
	s.ready <- childproto.ReadReady(r)
	_, _ = io.Copy(io.Discard, r)
}

// ReadStderr logs the child's stderr line by line at debug level and keeps
// a bounded tail for the warning logged when the child fails. Run it in
// its own goroutine; it returns at r's end.
func (s *Session) ReadStderr(r io.Reader) {
	defer close(s.errDone)
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			s.tail.add(line)
			s.log.Debug("session stderr", "line", strings.TrimRight(string(line), "\n"))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// AwaitReady waits for the readiness line and then one successful facts
// call, all within ReadyTimeout and ctx. Its errors are Internal, with a
// public message that quotes nothing the child wrote.
func (s *Session) AwaitReady(ctx context.Context) error {
	timeout := s.cfg.ReadyTimeout
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errReadyTimeout)
	defer cancel()
	ready := s.ready
	for {
		select {
		case err := <-ready:
			if errors.Is(err, childproto.ErrNoReadyLine) {
				ready = nil // the exit, or the timeout, tells more
				continue
			}
			if err != nil {
				return hub.Wrap(hub.Internal, err, "session failed its readiness handshake")
			}
			if _, err := s.Facts(ctx); err != nil {
				if ctx.Err() != nil {
					return notReady(ctx, timeout)
				}
				return hub.Wrap(hub.Internal, err, "session did not answer after it became ready")
			}
			return nil
		case <-s.done:
			return hub.Wrap(hub.Internal, s.exitErr,
				fmt.Sprintf("session exited before it was ready (%s)", s.status))
		case <-ctx.Done():
			return notReady(ctx, timeout)
		}
	}
}

// errReadyTimeout is the cause of AwaitReady's context ending at
// ReadyTimeout rather than with the caller's ctx.
var errReadyTimeout = errors.New("ready timeout")

// notReady is AwaitReady's error once its ctx ended: at the ready timeout,
// or with the caller's ctx.
func notReady(ctx context.Context, timeout time.Duration) error {
	if errors.Is(context.Cause(ctx), errReadyTimeout) {
		return hub.Wrap(hub.Internal, errReadyTimeout, fmt.Sprintf("session did not become ready within %s", timeout))
	}
	return StartInterrupted(ctx.Err())
}

// StartInterrupted is a backend's Start error when ctx ends first; it
// satisfies errors.Is(err, ctx.Err()).
func StartInterrupted(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return hub.Wrap(hub.Internal, err, "session did not become ready in time")
	}
	return hub.Wrap(hub.Internal, err, "session start was cancelled")
}

// Abort ends a child that failed to start and waits (up to StopGrace or
// KillWait) until the backend has finished it, then logs why with the
// tail of its stderr.
func (s *Session) Abort(why error) {
	s.markStopping()
	s.cfg.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(max(s.cfg.StopGrace, s.cfg.KillWait)):
		s.log.Error("session exit could not be confirmed after a failed start")
	}
	s.log.Warn("session failed to start", "err", why, "stderr", s.tail.String())
}

// Drain waits, for at most bound, until stdout and stderr are fully read:
// once the child and its group are gone they reach EOF at once; the bound
// only guards against a process that left the group holding them.
func (s *Session) Drain(bound time.Duration) {
	drained := time.After(bound)
	for _, ch := range []<-chan struct{}{s.outDone, s.errDone} {
		select {
		case <-ch:
		case <-drained:
		}
	}
}

// Finish records the child's end (exitErr and status as the backend
// knows them, e.g. "exit status 1"), logs it (with the stderr tail when
// nobody asked for the end), and closes Done. The backend calls it once,
// after its own clean-up.
func (s *Session) Finish(status string, exitErr error) {
	s.exitErr, s.status = exitErr, status
	if s.Stopping() {
		s.log.Debug("session ended", "status", status)
	} else {
		s.log.Warn("session ended on its own", "status", status, "stderr", s.tail.String())
	}
	close(s.done)
}

// Tail is the end of the child's stderr so far, for a backend's log.
func (s *Session) Tail() string { return s.tail.String() }

// tailSize bounds the stderr kept for a failure's log entry.
const tailSize = 2000

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) add(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
