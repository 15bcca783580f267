package sshhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// Start starts the session of spec on the host: connects (when not
// connected), puts the binary there, forwards the session's socket back
// to RuntimeDir, starts `wharf session` over the master and returns once
// the session printed its readiness line and answered a facts call
// through the forward. On any failure nothing is left running, forwarded
// or bound. A workspace whose session still runs is a Conflict. A
// session this Host let go, or lost the connection to, and that still
// runs in its grace is adopted instead (adopt.go): a long partition
// loses no work once the host is back.
func (h *Host) Start(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, childrun.StartInterrupted(err)
	}
	if spec.WorkspaceID == "" {
		return nil, hub.Errorf(hub.Internal, "session has no workspace id")
	}
	if h.wasLetGo(spec.WorkspaceID) {
		a, err := h.Adopt(ctx, spec)
		if err == nil {
			return a, nil
		}
		h.log.Debug("the session let go could not be adopted; starting another", "workspace", spec.WorkspaceID, "err", err)
	}
	name := shortHash(spec.WorkspaceID)
	lsock := filepath.Join(h.opts.RuntimeDir, name+".sock")
	if err := h.reserve(lsock, spec.WorkspaceID); err != nil {
		return nil, err
	}
	select {
	case h.starting <- struct{}{}:
	case <-ctx.Done():
		h.release(lsock)
		return nil, childrun.StartInterrupted(ctx.Err())
	}
	s, err := h.start(ctx, spec, name, lsock)
	<-h.starting
	if err != nil {
		h.release(lsock)
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = childrun.StartInterrupted(ctx.Err())
		}
		return nil, err
	}
	return s, nil
}

// start is Start once the workspace's slot is reserved.
func (h *Host) start(ctx context.Context, spec hub.WorkspaceSessionSpec, name, lsock string) (*session, error) {
	began := time.Now()
	var steps []any // how long each step took, for the log
	step := func(name string) {
		steps = append(steps, name, time.Since(began).Round(time.Millisecond))
	}
	r, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	step("connected")
	bin, err := h.install(ctx, r)
	if err != nil {
		return nil, err
	}
	step("installed")
	run := path.Join(r.root, "run")
	s := &session{h: h, name: name, lsock: lsock,
		rsock:   remoteSocket(r.root, name),
		pidFile: path.Join(run, name+".pid")}
	pr, err := h.project(ctx, spec.Credentials, name, path.Join(run, name), bin, false)
	if err != nil {
		h.log.Error("session credentials could not be prepared", "workspace", spec.WorkspaceID, "err", err)
		return nil, hub.Wrap(hub.Internal, err, "the session's credentials could not be prepared")
	}
	s.proj = pr
	step("projected")
	if s.m, err = h.takeMaster(ctx); err != nil {
		pr.hub.Close()
		return nil, err
	}
	data := path.Join(r.root, "data", dataName(spec.WorkspaceID))
	argv := append([]string{run, name, spec.Path, data, s.rsock, h.keepEnv, bin},
		childproto.Args{WorkspaceID: spec.WorkspaceID, Path: spec.Path, Socket: s.rsock, DataDir: data,
			Agents: h.opts.AgentCommands, DetachGrace: h.opts.DetachGrace}.Argv()...)
	if err := s.spawn(spec.WorkspaceID, argv); err != nil {
		h.unforward(s.m.ctl, s.lsock, s.rsock, pr)
		pr.hub.Close()
		h.giveMaster(s.m)
		return nil, err
	}
	if err := s.forwardCredentials(ctx); err != nil {
		s.Abort(err)
		if s.exitCode() == exitNoFolder {
			return nil, hub.Wrap(hub.Internal, err, "workspace folder is missing or not a directory on the host")
		}
		return nil, err
	}
	step("forwarded")
	if err := s.AwaitReady(ctx); err != nil {
		s.Abort(err)
		switch s.exitCode() {
		case exitNoFolder:
			return nil, hub.Wrap(hub.Internal, err, "workspace folder is missing or not a directory on the host")
		case exitNoRuntime:
			return nil, hub.Wrap(hub.Internal, err, "the session's private folders could not be made on the host")
		}
		return nil, err
	}
	step("ready")
	h.log.Debug("session started", append([]any{"workspace", spec.WorkspaceID, "pid", s.pid.Load()}, steps...)...)
	return s, nil
}

// session is one remote session: the shared childrun.Session, reached
// through the forward, plus the local ssh client whose channel runs the
// remote child.
type session struct {
	*childrun.Session
	h       *Host
	name    string // the hash naming its sockets and pid file
	lsock   string // the forward's local end
	rsock   string // the child's socket on the host
	pidFile string
	m       *master // the master its channel is on
	cmd     *exec.Cmd
	pipes   *childrun.Pipes
	pid     atomic.Int64 // the remote child's pid (and group); 0 until it printed it
	reason  string       // why it ended, in the user's terms; set by reap before Done closes

	unpacked     chan bool     // the start script's first line: whether it unpacked the credentials
	preambleSent chan struct{} // closed once the variables and folder are written (or failed)
	proj         *projection   // its credentials, closed by reap

	ended     atomic.Bool // the local client has exited
	detached  atomic.Bool // let go (Detach): its end leaves the child running
	closeOnce sync.Once
	state     *os.ProcessState // set before Done is closed
}

// localForward is the forward of a session's socket rsock to the Hub's
// lsock.
func localForward(lsock, rsock string) []string { return []string{"-L", lsock + ":" + rsock} }

// forwardCredentials waits until the start script has unpacked the
// credentials folder, forwards its sockets there and lets the script
// start the child.
func (s *session) forwardCredentials(ctx context.Context) error {
	select {
	case ok := <-s.unpacked:
		if !ok {
			return hub.Errorf(hub.Internal, "the session's credentials could not be prepared on the host")
		}
	case <-s.Done():
		return hub.Wrap(hub.Internal, errors.New(s.Tail()), "session exited before it was ready")
	case <-ctx.Done():
		return childrun.StartInterrupted(ctx.Err())
	}
	if fw := s.proj.forwards(); len(fw) > 0 {
		if err := s.h.forward(ctx, "forward", fw); err != nil {
			return err
		}
	}
	<-s.preambleSent // the script read it all before it unpacked
	if _, err := s.pipes.StdinW.Write([]byte("go\n")); err != nil {
		return hub.Wrap(hub.Internal, err, "session could not be started")
	}
	return nil
}

// spawn starts the local ssh client that runs the child over the master,
// and the goroutines that read it and wait for it.
func (s *session) spawn(id string, argv []string) error {
	h := s.h
	cmd := h.remoteCommandOn(context.Background(), s.m.ctl, localForward(s.lsock, s.rsock), startScript, argv...)
	cmd.WaitDelay = 0 // the pipes are files the reaper closes itself
	p, err := childrun.NewPipes()
	if err != nil {
		return hub.Wrap(hub.Internal, err, "session could not be started")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.ChildEnds()
	err = cmd.Start()
	p.CloseChildEnds()
	if err != nil {
		p.CloseOurEnds()
		h.log.Error("ssh could not be started", "workspace", id, "err", err)
		return hub.Wrap(hub.Internal, err, "session could not be started")
	}
	s.cmd, s.pipes = cmd, p
	// The variables and the credentials folder go first on the channel,
	// from a goroutine: a script that exits early stops reading, and the
	// write then ends only when the reaper closes the pipe.
	s.unpacked, s.preambleSent = make(chan bool, 1), make(chan struct{})
	go func() {
		defer close(s.preambleSent)
		if _, err := p.StdinW.Write(s.proj.preamble()); err != nil {
			h.log.Debug("the session's variables were not all sent", "workspace", id, "err", err)
		}
	}()
	h.live.Add(1)
	s.Session = childrun.New(childrun.Config{
		WorkspaceID: id, Socket: s.lsock, Process: s, Terminate: "the end of its input",
		ReadyTimeout: h.opts.ReadyTimeout, StopGrace: h.opts.StopGrace, KillWait: killWait,
		Log: h.log.With("workspace", id),
	})
	go s.readStdout()
	go s.ReadStderr(p.StderrR)
	go s.reap()
	return nil
}

// readStdout reads the lines the start script prints (the credentials
// unpacked, then the child's pid), then hands the rest (the child's own
// stdout) to the shared reader.
func (s *session) readStdout() {
	line, ok := readLine(s.pipes.StdoutR)
	s.unpacked <- ok && line == "wharf-unpacked"
	if line, ok := readLine(s.pipes.StdoutR); ok {
		v, ok := strings.CutPrefix(line, "wharf-pid ")
		if pid, err := strconv.Atoi(v); ok && err == nil && pid > 1 {
			s.pid.Store(int64(pid))
		}
	}
	s.ReadStdout(s.pipes.StdoutR)
}

// maxScriptLine bounds a line of the start script's.
const maxScriptLine = 32

// readLine reads one line of the start script's, one byte at a time,
// never past its end.
func readLine(r io.Reader) (string, bool) {
	var line [maxScriptLine]byte
	for n := 0; n < len(line); n++ {
		if _, err := io.ReadFull(r, line[n:n+1]); err != nil {
			return "", false
		}
		if line[n] == '\n' {
			return string(line[:n]), true
		}
	}
	return "", false
}

// Terminate asks the child to stop in order (childrun.Process): the stop
// line on its stdin, then the channel's end; without a detach grace, the
// end alone is its polite stop.
func (s *session) Terminate() {
	s.closeOnce.Do(func() {
		if s.h.opts.DetachGrace > 0 {
			_, _ = s.pipes.StdinW.Write([]byte(childproto.StopLine))
		}
		s.pipes.StdinW.Close()
	})
}

// Detach lets the session go (hub.SessionDetacher): the local client
// ends, and so the channel; the child reads the end of its stdin and
// runs on for the detach grace, for a Hub to adopt. Nothing on the host
// is removed. It returns once the session is Done here.
func (s *session) Detach() {
	if s.ended.Load() {
		return
	}
	s.detached.Store(true)
	s.LetGo()
	_ = s.cmd.Process.Kill() // a no-op once it has been waited for
	<-s.Done()               // reap's every step is bounded
}

// Kill kills the child's group on the host over the master; the start
// script then cleans up and the channel ends on its own. When that
// cannot be done (no pid yet, the host unreachable) it kills the local
// client instead, so the session ends on the Hub whatever the host does
// (childrun.Process).
func (s *session) Kill() {
	if s.ended.Load() {
		return
	}
	if pid := s.pid.Load(); pid > 1 {
		ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
		defer cancel()
		var stderr boundedBuffer
		cmd := s.h.remoteCommand(ctx, killScript, strconv.FormatInt(pid, 10), s.rsock, "KILL")
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			return
		}
		s.h.log.Warn("the session's processes on the host could not be killed", "pid", pid, "err", err,
			"stderr", strings.TrimSpace(stderr.String()))
	}
	if !s.ended.Load() {
		_ = s.cmd.Process.Kill() // a no-op once it has been waited for
	}
}

// reap is the one goroutine that waits for the local client. Its exit is
// the session's end (the child exited, was killed, or the connection was
// lost). It then cancels the forward, removes the sockets on both ends
// and the pid file, frees the workspace's slot and finishes the session.
func (s *session) reap() {
	err := s.cmd.Wait()
	s.ended.Store(true)
	s.state = s.cmd.ProcessState
	s.Drain(time.Second)
	s.pipes.CloseOurEnds()
	s.h.unforward(s.m.ctl, s.lsock, s.rsock, s.proj)
	s.proj.hub.Close() // the forwards are gone: nothing on the host reaches its sockets
	defer s.h.giveMaster(s.m)
	if s.detached.Load() {
		s.h.release(s.lsock)
		s.h.letGo(s.WorkspaceID())
		s.h.live.Add(-1)
		s.Finish("let go, running on the host", err)
		return
	}
	status := s.state.String()
	s.reason = fmt.Sprintf("The session on %s ended on its own (%s).", s.h.opts.Name, status)
	if code := s.state.ExitCode(); code == sshExitFailure || code < 0 {
		// ssh's own failure, or ssh killed: the child was killed, or the
		// master (the connection) is gone.
		ctx, cancel := context.WithTimeout(context.Background(), s.h.opts.StopGrace)
		up := s.h.masterUpAt(ctx, s.m.ctl)
		cancel()
		switch {
		case up || s.h.opts.DetachGrace <= 0:
			// The shell was killed, or the child ended with the channel:
			// its clean-up may not have run.
			s.h.clean(s)
			status = "the session was killed (" + status + ")"
			s.reason = s.h.reasonKilled()
		default:
			// The child runs on in its grace, its socket and pid file
			// in place: a start adopts it once the host is back.
			s.h.letGo(s.WorkspaceID())
			status = "the connection to the host was lost (" + status + ")"
			s.reason = s.h.reasonLost()
		}
	}
	s.h.release(s.lsock)
	s.h.live.Add(-1)
	s.Finish(status, err)
}

// EndReason says why the session ended on its own, once it has
// (hub.EndReporter): reap sets it before the session is finished.
func (s *session) EndReason() string {
	select {
	case <-s.Done():
		return s.reason
	default:
		return ""
	}
}

// clean removes a session's socket and pid file on the host.
func (h *Host) clean(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	var stderr boundedBuffer
	cmd := h.remoteCommand(ctx, cleanScript, s.rsock, s.pidFile, s.proj.remote)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		h.log.Warn("the session's socket on the host could not be removed", "err", err,
			"stderr", strings.TrimSpace(stderr.String()))
	}
}

// exitCode is the local client's exit status once the session ended, or
// -1.
func (s *session) exitCode() int {
	select {
	case <-s.Done():
		return s.state.ExitCode()
	default:
		return -1
	}
}

// forward asks the primary master to forward (op "forward") or stop
// forwarding (op "cancel") spec.
func (h *Host) forward(ctx context.Context, op string, spec []string) error {
	return h.forwardOn(ctx, h.ctlPath, op, spec)
}

// forwardOn is forward on the master of control socket ctl.
func (h *Host) forwardOn(ctx context.Context, ctl, op string, spec []string) error {
	var stderr boundedBuffer
	cmd := h.controlCommand(ctx, ctl, op, spec...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		h.log.Warn("ssh "+op+" failed", "err", err, "stderr", strings.TrimSpace(stderr.String()))
		if ctx.Err() != nil {
			return childrun.StartInterrupted(ctx.Err())
		}
		return hub.Wrap(hub.Unavailable, err, fmt.Sprintf("host %s: the session's connection could not be set up", h.opts.Name))
	}
	return nil
}

// unforward cancels the forwards of a session's socket (rsock to lsock,
// on the master of ctl) and credentials (on the primary), and removes
// lsock. A master that is gone took the forwards with it.
func (h *Host) unforward(ctl, lsock, rsock string, pr *projection) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	// Each fails only when the master, and the forward, are gone, or the
	// forward was never made (a failed start).
	_ = h.forwardOn(ctx, ctl, "cancel", localForward(lsock, rsock))
	if fw := pr.forwards(); len(fw) > 0 {
		_ = h.forward(ctx, "cancel", fw)
	}
	if err := os.Remove(lsock); err != nil && !errors.Is(err, os.ErrNotExist) {
		h.log.Warn("could not remove the session's forwarded socket", "err", err)
	}
}

// reasonKilled and reasonLost are why a session ended on its own, in the
// user's terms (hub.EndReporter), for started and adopted sessions alike.
func (h *Host) reasonKilled() string {
	return fmt.Sprintf("The session on %s was killed.", h.opts.Name)
}

func (h *Host) reasonLost() string {
	return fmt.Sprintf("The connection to %s was lost for longer than the Hub waits, so its session ended.", h.opts.Name)
}
