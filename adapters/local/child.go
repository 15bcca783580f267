package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// This file is the child's side of the lifecycle: its pipes, its output,
// readiness, and the one goroutine that waits for it.

// pipes are the child's stdin, stdout and stderr. Each pair is created by
// os.Pipe, so both ends are close-on-exec and no other child inherits ours.
type pipes struct {
	stdinR, stdinW   *os.File // we hold stdinW open for the child's life
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.stdinR, p.stdinW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.stdoutR, p.stdoutW, err = os.Pipe(); err != nil {
		p.stdinR.Close()
		p.stdinW.Close()
		return nil, err
	}
	if p.stderrR, p.stderrW, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.stdinW.Close()
		p.stdoutR.Close()
		return nil, err
	}
	return &p, nil
}

func (p *pipes) childEnds() (stdin, stdout, stderr *os.File) { return p.stdinR, p.stdoutW, p.stderrW }

func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.stdinR, p.stdoutW, p.stderrW} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeOurEnds() {
	p.stdinW.Close()
	p.stdoutR.Close()
	p.stderrR.Close()
}

// readStdout reports the readiness line on s.ready (see
// childproto.ReadReady), then discards the rest so a child that breaks the
// protocol can never block on a full pipe.
func (s *workspaceSession) readStdout() {
	defer close(s.outDone)
	s.ready <- childproto.ReadReady(s.pipes.stdoutR)
	_, _ = io.Copy(io.Discard, s.pipes.stdoutR)
}

// readStderr logs the child's stderr line by line at debug level and keeps
// a bounded tail for the warning logged when the child fails.
func (s *workspaceSession) readStderr() {
	defer close(s.errDone)
	br := bufio.NewReaderSize(s.pipes.stderrR, 4096)
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

// awaitReady waits for the readiness line and then one successful facts
// call, all within ReadyTimeout and ctx.
func (s *workspaceSession) awaitReady(ctx context.Context) error {
	timeout := s.b.opts.ReadyTimeout
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
				fmt.Sprintf("session exited before it was ready (%s)", s.state))
		case <-ctx.Done():
			return notReady(ctx, timeout)
		}
	}
}

// errReadyTimeout is the cause of awaitReady's context ending at
// ReadyTimeout rather than with the caller's ctx.
var errReadyTimeout = errors.New("ready timeout")

// notReady is awaitReady's error once its ctx ended: at the ready timeout,
// or with the caller's ctx.
func notReady(ctx context.Context, timeout time.Duration) error {
	if errors.Is(context.Cause(ctx), errReadyTimeout) {
		return hub.Wrap(hub.Internal, errReadyTimeout, fmt.Sprintf("session did not become ready within %s", timeout))
	}
	return startInterrupted(ctx.Err())
}

// abort ends a child that failed to start and waits until it is reaped,
// then logs why with the tail of its stderr.
func (s *workspaceSession) abort(why error) {
	s.signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(s.b.opts.StopGrace):
		s.log.Error("session exit could not be confirmed after a failed start", "pid", s.pid)
	}
	s.log.Warn("session failed to start", "err", why, "stderr", s.tail.String())
}

// signal sends sig to the child's process group, unless the child has
// already exited: its pid may then be reused, so it is never signalled.
// Signalling marks the end as asked for.
func (s *workspaceSession) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	if s.exited {
		return
	}
	if err := syscall.Kill(-s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.log.Warn("could not signal the session", "signal", sig, "err", err)
	}
}

// reap is the one goroutine that waits for the child. Once the child has
// exited, and before its pid can be reused, it kills the child's process
// group so nothing the child started outlives it; then it reaps the child,
// closes the pipes, removes the socket, closes the credential projection
// (agent, credential socket, runtime folder), frees the workspace's slot,
// and closes done.
func (s *workspaceSession) reap() {
	unreaped := awaitExit(s.pid)
	if unreaped {
		s.killGroup()
	}
	err := s.cmd.Wait()
	if !unreaped {
		s.killGroup()
	}
	s.exitErr, s.state = err, s.cmd.ProcessState

	// The group is dead, so the pipes reach EOF at once; the bound only
	// guards against a process that left the group holding them.
	drained := time.After(time.Second)
	for _, ch := range []<-chan struct{}{s.outDone, s.errDone} {
		select {
		case <-ch:
		case <-drained:
		}
	}
	s.pipes.closeOurEnds()
	if err := os.Remove(s.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("could not remove the session socket", "err", err)
	}
	s.proj.Close() // the child and its group are gone: nothing uses its credentials
	s.mu.Lock()
	asked := s.stopping
	s.mu.Unlock()
	if asked {
		s.log.Debug("session ended", "status", s.state.String())
	} else {
		s.log.Warn("session ended on its own", "status", s.state.String(), "stderr", s.tail.String())
	}
	s.b.release(s.sock)
	s.b.live.Add(-1)
	close(s.done)
}

// killGroup marks the child exited and kills what is left of its group.
func (s *workspaceSession) killGroup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = true
	if err := syscall.Kill(-s.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.log.Warn("could not kill the session's process group", "err", err)
	}
}

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
