package sshhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// A session outlives the Hub that started it for DetachGrace
// (childproto's hold.go): when that Hub closes it lets the session go
// (session.Detach), and when it dies or loses the host the channel's
// end does the same. The next Hub adopts it: it finds the session by its
// pid file, checks on /proc that the pid still runs this workspace's
// session of this build, forwards its socket and the credentials' sockets
// again (the credentials folder on the host is the one the session was
// started with; its sockets now reach this Hub's agent and helper), and
// holds it by a GET whose end is the session's end. The start script
// that started the child still runs on the host and cleans up after it,
// as after any session.

var (
	_ hub.SessionAdopter  = (*Host)(nil)
	_ hub.SessionDetacher = (*session)(nil)
	_ hub.SessionDetacher = (*adoptedSession)(nil)
)

// Exit statuses of adoptScript.
const (
	exitNoSession    = 3
	exitAnotherBuild = 4
)

// Adopt returns the session of spec an earlier Hub left running on the
// host (hub.SessionAdopter). It is NotFound when none runs there, when it
// runs another build (reaped then, and started afresh by the core), or
// when this Host already has the workspace's session.
func (h *Host) Adopt(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, childrun.StartInterrupted(err)
	}
	if h.opts.DetachGrace <= 0 {
		return nil, hub.Errorf(hub.NotFound, "sessions on this host end with their Hub")
	}
	name := shortHash(spec.WorkspaceID)
	lsock := filepath.Join(h.opts.RuntimeDir, name+".sock")
	if err := h.reserve(lsock, spec.WorkspaceID); err != nil {
		return nil, hub.Wrap(hub.NotFound, err, "the session already belongs to this Hub")
	}
	a, err := h.adopt(ctx, spec, name, lsock)
	if err != nil {
		h.release(lsock)
		return nil, err
	}
	return a, nil
}

// adopt is Adopt once the workspace's slot is reserved.
func (h *Host) adopt(ctx context.Context, spec hub.WorkspaceSessionSpec, name, lsock string) (*adoptedSession, error) {
	r, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	bin, err := h.install(ctx, r)
	if err != nil {
		return nil, err
	}
	run := path.Join(r.root, "run")
	a := &adoptedSession{h: h, name: name, lsock: lsock, rsock: remoteSocket(r.root, name), pidFile: path.Join(run, name+".pid")}
	var out, stderr boundedBuffer
	cmd := h.remoteCommand(ctx, adoptScript, a.pidFile, bin, a.rsock, spec.WorkspaceID)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	switch err := cmd.Run(); {
	case err == nil:
	case exitStatus(err) == exitNoSession:
		return nil, hub.Errorf(hub.NotFound, "no session of this workspace runs on the host")
	case exitStatus(err) == exitAnotherBuild:
		h.log.Info("a session left on the host runs another build; it is not adopted", "workspace", spec.WorkspaceID)
		return nil, hub.Errorf(hub.NotFound, "the session on the host runs another build")
	default:
		return nil, h.remoteFailure(ctx, err, stderr.String(), "the host's sessions could not be looked at")
	}
	v, _ := strings.CutPrefix(strings.TrimSpace(out.String()), "wharf-pid ")
	if a.pid, err = strconv.ParseInt(v, 10, 64); err != nil || a.pid <= 1 {
		return nil, hub.Errorf(hub.Internal, "host %s: the session's process could not be read", h.opts.Name)
	}
	if a.proj, err = h.project(ctx, spec.Credentials, name, path.Join(run, name), bin, false); err != nil {
		h.log.Error("session credentials could not be prepared", "workspace", spec.WorkspaceID, "err", err)
		return nil, hub.Wrap(hub.Internal, err, "the session's credentials could not be prepared")
	}
	if err := h.forward(ctx, "forward", append(localForward(lsock, a.rsock), a.proj.forwards()...)); err != nil {
		h.unforward(h.ctlPath, lsock, a.rsock, a.proj)
		a.proj.hub.Close()
		return nil, err
	}
	a.Session = childrun.New(childrun.Config{
		WorkspaceID: spec.WorkspaceID, Socket: lsock, Process: a, Terminate: "SIGTERM",
		ReadyTimeout: h.opts.ReadyTimeout, StopGrace: h.opts.StopGrace, KillWait: killWait,
		Log: h.log.With("workspace", spec.WorkspaceID),
	})
	if a.hold, err = a.Hold(ctx); err == nil {
		_, err = a.Facts(ctx)
		if err != nil {
			a.hold.Close()
		}
	}
	if err != nil {
		h.unforward(h.ctlPath, lsock, a.rsock, a.proj)
		a.proj.hub.Close()
		return nil, hub.Wrap(hub.Unavailable, err, fmt.Sprintf("host %s: the session left running there did not answer", h.opts.Name))
	}
	h.live.Add(1)
	go a.watch()
	h.log.Info("adopted a session left running on the host", "workspace", spec.WorkspaceID, "pid", a.pid)
	return a, nil
}

// adoptedSession is a session this Host adopted: reached through the
// forward like a started one, held by a GET instead of a channel.
type adoptedSession struct {
	*childrun.Session
	h        *Host
	name     string // the hash naming its sockets and pid file
	lsock    string // the forward's local end
	rsock    string // the child's socket on the host
	pidFile  string // removed by the script that started it, last, once it is gone
	pid      int64  // the child's pid (and group) on the host
	proj     *projection
	hold     io.ReadCloser
	detached atomic.Bool // let go (Detach)
	reason   string      // why it ended, in the user's terms; set before Done closes
}

// Terminate sends SIGTERM to the child's group on the host, its polite
// stop (childrun.Process).
func (a *adoptedSession) Terminate() { a.signal("TERM") }

// Kill kills the child's group on the host; when the host cannot be
// told, it lets the child go instead, so the session ends here whatever
// the host does (childrun.Process).
func (a *adoptedSession) Kill() {
	if err := a.signal("KILL"); err != nil {
		a.hold.Close()
	}
}

// signal sends sig to the child's group over the master, within
// remoteTimeout.
func (a *adoptedSession) signal(sig string) error {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	var stderr boundedBuffer
	cmd := a.h.remoteCommand(ctx, killScript, strconv.FormatInt(a.pid, 10), a.rsock, sig)
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		a.h.log.Warn("the session on the host could not be signalled", "signal", sig, "pid", a.pid, "err", err,
			"stderr", strings.TrimSpace(stderr.String()))
	}
	return err
}

// Detach lets the session go again (hub.SessionDetacher): the hold ends,
// and the child waits a grace for the next Hub.
func (a *adoptedSession) Detach() {
	select {
	case <-a.Done():
		return
	default:
	}
	a.detached.Store(true)
	a.LetGo()
	a.hold.Close()
	<-a.Done() // watch returns at once once the hold is closed
}

// watch waits for the hold's end, the session's end here: the child's
// (the body's proper end), the connection's or a detach (an error). It
// cancels the forwards, frees the workspace's slot and finishes the
// session.
func (a *adoptedSession) watch() {
	_, err := io.Copy(io.Discard, a.hold)
	a.hold.Close()
	h := a.h
	h.unforward(h.ctlPath, a.lsock, a.rsock, a.proj)
	a.proj.hub.Close()
	h.release(a.lsock)
	h.live.Add(-1)
	status := "exited"
	a.reason = fmt.Sprintf("The session on %s ended on its own.", h.opts.Name)
	switch {
	case a.detached.Load():
		h.letGo(a.WorkspaceID())
		status = "let go, running on the host"
	case err == nil:
		// The child ends its streams first: it is gone once its start
		// script has cleaned up after it.
		a.awaitGone()
	case err != nil:
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StopGrace)
		up := h.masterUp(ctx)
		cancel()
		status = "the session was killed"
		a.reason = h.reasonKilled()
		if !up {
			h.letGo(a.WorkspaceID())
			status = "the connection to the host was lost"
			a.reason = h.reasonLost()
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil // the status says it
	}
	a.Finish(status, err)
}

// awaitGone waits, within remoteTimeout and twice the stop grace, until the start script
// removed the pid file: the child has exited and nothing of it is left.
func (a *adoptedSession) awaitGone() {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout+2*a.h.opts.StopGrace)
	defer cancel()
	var stderr boundedBuffer
	cmd := a.h.remoteCommand(ctx, goneScript, a.pidFile)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		a.h.log.Warn("the end of a session on the host could not be confirmed", "pid", a.pid, "err", err,
			"stderr", strings.TrimSpace(stderr.String()))
	}
}

// EndReason says why the session ended on its own, once it has
// (hub.EndReporter).
func (a *adoptedSession) EndReason() string {
	select {
	case <-a.Done():
		return a.reason
	default:
		return ""
	}
}

// letGo records that the session of workspace id may run on in its
// grace, unheld.
func (h *Host) letGo(id string) {
	if h.opts.DetachGrace <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lingering[id] = true
}

// wasLetGo reports, once, whether the session of workspace id was let go
// or lost by this Host.
func (h *Host) wasLetGo(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.lingering[id]
	delete(h.lingering, id)
	return was
}
