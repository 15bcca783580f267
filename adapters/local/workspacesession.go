package local

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

// workspaceSession is one local child: the shared session
// (childrun.Session, which speaks to the child over its socket and runs
// the stop's escalation) plus what is local — the OS process, its
// group, its pipes and its credential projection.
type workspaceSession struct {
	*childrun.Session
	b     *Backend
	sock  string
	cmd   *exec.Cmd
	pid   int
	pipes *childrun.Pipes
	proj  *credenv.Projection // its credentials, closed by reap

	mu     sync.Mutex
	exited bool // the child has exited: its pid must not be signalled any more

	state *os.ProcessState // set by reap before Done is closed
}

// Terminate sends SIGTERM to the child's group (childrun.Process).
func (s *workspaceSession) Terminate() { s.signal(syscall.SIGTERM) }

// Kill sends SIGKILL to the child's group (childrun.Process).
func (s *workspaceSession) Kill() { s.signal(syscall.SIGKILL) }

// signal sends sig to the child's process group, unless the child has
// already exited: its pid may then be reused, so it is never signalled.
func (s *workspaceSession) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited {
		return
	}
	if err := syscall.Kill(-s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.b.log.Warn("could not signal the session", "pid", s.pid, "signal", sig, "err", err)
	}
}

// reap is the one goroutine that waits for the child. Once the child has
// exited, and before its pid can be reused, it kills the child's process
// group so nothing the child started outlives it; then it reaps the child,
// closes the pipes, removes the socket, closes the credential projection
// (agent, credential socket, runtime folder), frees the workspace's slot,
// and finishes the session (closing Done).
func (s *workspaceSession) reap() {
	unreaped := awaitExit(s.pid)
	if unreaped {
		s.killGroup()
	}
	err := s.cmd.Wait()
	if !unreaped {
		s.killGroup()
	}
	s.state = s.cmd.ProcessState
	s.Drain(time.Second)
	s.pipes.CloseOurEnds()
	if err := os.Remove(s.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.b.log.Warn("could not remove the session socket", "pid", s.pid, "err", err)
	}
	s.proj.Close() // the child and its group are gone: nothing uses its credentials
	s.b.release(s.sock)
	s.b.live.Add(-1)
	s.Finish(s.state.String(), err)
}

// killGroup marks the child exited and kills what is left of its group.
func (s *workspaceSession) killGroup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = true
	if err := syscall.Kill(-s.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.b.log.Warn("could not kill the session's process group", "pid", s.pid, "err", err)
	}
}
