package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// runningWorkspace is a running workspace session as the Hub tracks it.
type runningWorkspace struct {
	rs       hub.WorkspaceSession
	grant    *grant // what it was lent of the credentials
	stopping bool   // set under Hub.mu once the Hub ends it, so its end is not mistaken for a crash
	// detach, when set, lets the session go at the Hub's close rather than
	// stop it: its place adopts sessions (adopt.go).
	detach hub.SessionDetacher
}

// workspace loads a registered workspace, NotFound with the contract's
// text when there is none.
func (h *Hub) workspace(ctx context.Context, id string) (hub.Workspace, error) {
	var w hub.Workspace
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		w, err = tx.Workspace(id)
		return err
	})
	if hub.KindOf(err) == hub.NotFound {
		return hub.Workspace{}, hub.Errorf(hub.NotFound, "unknown workspace: %s", id)
	}
	return w, err
}

// workspaceSession returns the running workspace session of a workspace,
// or nil. A session whose child has ended is not running, even before its
// watcher has cleaned up.
func (h *Hub) workspaceSession(id string) *runningWorkspace {
	h.mu.Lock()
	ls := h.running[id]
	h.mu.Unlock()
	if ls == nil {
		return nil
	}
	select {
	case <-ls.rs.Done():
		return nil
	default:
		return ls
	}
}

// runningSessions returns the sessions that run now, by workspace id.
// endReason is why rs ended on its own, in the user's terms.
func endReason(rs hub.WorkspaceSession) string {
	if r, ok := rs.(hub.EndReporter); ok {
		if why := r.EndReason(); why != "" {
			return why
		}
	}
	return "The session ended on its own."
}

// endedReason is why id's last session ended on its own; "" when it did
// not, or the workspace started again since.
func (h *Hub) endedReason(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ended[id]
}

func (h *Hub) runningSessions() map[string]*runningWorkspace {
	h.mu.Lock()
	out := make(map[string]*runningWorkspace, len(h.running))
	for id, rw := range h.running {
		out[id] = rw
	}
	h.mu.Unlock()
	for id, rw := range out {
		select {
		case <-rw.rs.Done():
			delete(out, id) // ended, even before its watcher has cleaned up
		default:
		}
	}
	return out
}

// Running reports whether the workspace's session runs.
func (h *Hub) Running(id string) bool { return h.workspaceSession(id) != nil }

// StartWorkspace starts the workspace's session. Concurrent starts of one
// workspace join: the later ones wait for the first and find it running.
func (h *Hub) StartWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error) {
	unlock, err := h.wsLocks.Lock(ctx, id)
	if err != nil {
		return hub.WorkspaceAction{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if err := h.startLocked(ctx, id, startNew); err != nil {
		return hub.WorkspaceAction{}, err
	}
	return hub.WorkspaceAction{ID: id, Running: true}, nil
}

// startLocked starts the session of id, or adopts it (adopt.go); the
// caller holds id's lock.
func (h *Hub) startLocked(ctx context.Context, id string, how startHow) error {
	w, err := h.workspace(ctx, id)
	if err != nil {
		return err
	}
	if err := h.fence(fenceStart); err != nil {
		return err
	}
	if h.workspaceSession(id) != nil {
		h.idle.touch(id) // someone wants it running: its idle period starts over
		return nil
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return hub.Errorf(hub.Unavailable, "the Hub is shutting down")
	}
	// An impatient client must not abort a start halfway; the backend
	// bounds its own wait.
	ctx = context.WithoutCancel(ctx)
	creds, g, err := h.lend(ctx, id)
	if err != nil {
		return hub.Wrap(hub.Internal, err, fmt.Sprintf("session for '%s' failed to start: %s", id, hub.MessageOf(err)))
	}
	pl, err := h.placeOf(ctx, w.Backend)
	if err != nil {
		h.grants.end(g)
		return hub.Wrap(hub.KindOf(err), err, fmt.Sprintf("session for '%s' failed to start: %s", id, hub.MessageOf(err)))
	}
	spec := hub.WorkspaceSessionSpec{WorkspaceID: id, Path: w.Path, Credentials: creds}
	var rs hub.WorkspaceSession
	if how == adoptOnly {
		rs, err = adopt(ctx, pl, spec)
	} else {
		rs, err = pl.backend.Start(ctx, spec)
	}
	if how == adoptOnly && hub.KindOf(err) == hub.NotFound {
		h.grants.end(g)
		return err
	}
	if err != nil {
		h.grants.end(g)
		h.log.LogAttrs(ctx, slog.LevelWarn, "workspace session failed to start",
			slog.String("workspace", id), slog.Any("err", err))
		why := hub.MessageOf(err)
		if why == "" {
			why = "the session could not be started"
		}
		return hub.Wrap(hub.Internal, err, fmt.Sprintf("session for '%s' failed to start: %s", id, why))
	}
	ls := &runningWorkspace{rs: rs, grant: g, detach: detacher(pl, rs)}
	if err := h.setAutoStart(ctx, id, true, workspaceSessionStarted{id: id, rw: ls}); err != nil {
		if serr := rs.Stop(ctx); serr != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "workspace session could not be stopped",
				slog.String("workspace", id), slog.Any("err", serr))
		}
		return hub.Wrap(hub.Internal, err, "workspace state could not be persisted")
	}
	h.counters.sessionStarts.Add(1)
	h.watchers.Add(1)
	go h.watch(id, ls)
	return nil
}

// watch notices a session that ends on its own and records the workspace
// as stopped, so it is not started again when the Hub restarts.
func (h *Hub) watch(id string, ls *runningWorkspace) {
	defer h.watchers.Done()
	<-ls.rs.Done()
	h.mu.Lock()
	crashed := !ls.stopping
	if crashed {
		h.ended[id] = endReason(ls.rs)
	}
	h.mu.Unlock()
	ctx := context.Background()
	h.settle(ctx, workspaceSessionEnded{id: id, rw: ls})
	if !crashed {
		h.counters.sessionStops.Add(1)
		return
	}
	h.counters.sessionCrashes.Add(1)
	h.log.LogAttrs(ctx, slog.LevelWarn, "workspace session ended on its own", slog.String("workspace", id),
		slog.String("reason", h.endedReason(id)))
	unlock, err := h.wsLocks.Lock(ctx, id)
	if err != nil {
		return
	}
	defer unlock()
	if h.workspaceSession(id) != nil {
		return // started again meanwhile
	}
	if err := h.setAutoStart(ctx, id, false); err != nil && hub.KindOf(err) != hub.NotFound {
		h.log.LogAttrs(ctx, slog.LevelError, "could not record a stopped workspace",
			slog.String("workspace", id), slog.Any("err", err))
	}
}

// setAutoStart records whether id's session runs, so a Hub restart starts
// it again; also are the changes outside the store that take effect with
// the record (a session that started).
func (h *Hub) setAutoStart(ctx context.Context, id string, on bool, also ...change) error {
	return h.commit(ctx, func(tx *writes) error {
		w, err := tx.Workspace(id)
		if err != nil || w.AutoStart == on {
			return err
		}
		w.AutoStart = on
		return tx.UpdateWorkspace(w)
	}, also...)
}

// StopWorkspace stops the workspace's session; it waits for a start in
// flight and then stops what it started.
func (h *Hub) StopWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error) {
	unlock, err := h.wsLocks.Lock(ctx, id)
	if err != nil {
		return hub.WorkspaceAction{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if _, err := h.workspace(ctx, id); err != nil {
		return hub.WorkspaceAction{}, err
	}
	was, err := h.stopLocked(ctx, id)
	if err != nil {
		return hub.WorkspaceAction{}, err
	}
	return hub.WorkspaceAction{ID: id, Running: false, WasRunning: &was}, nil
}

// stopLocked stops the session of id, if any, and records the workspace as
// stopped; the caller holds id's lock. A failed stop keeps the session
// tracked as running, so the stop can be retried.
func (h *Hub) stopLocked(ctx context.Context, id string) (wasRunning bool, err error) {
	h.mu.Lock()
	ls := h.running[id]
	if ls != nil {
		ls.stopping = true
	}
	h.mu.Unlock()
	if ls == nil {
		return false, nil
	}
	select {
	case <-ls.rs.Done():
	default:
		wasRunning = true
	}
	ctx = context.WithoutCancel(ctx)
	if err := ls.rs.Stop(ctx); err != nil {
		h.mu.Lock()
		ls.stopping = false
		h.mu.Unlock()
		return wasRunning, hub.Wrap(hub.Internal, err, fmt.Sprintf("session for '%s' could not be stopped", id))
	}
	h.settle(ctx, workspaceSessionEnded{id: id, rw: ls})
	if err := h.setAutoStart(ctx, id, false); err != nil && hub.KindOf(err) != hub.NotFound {
		// The session is stopped, which is what was asked; the record
		// only decides whether a Hub restart starts it again.
		h.log.LogAttrs(ctx, slog.LevelError, "could not record a stopped workspace",
			slog.String("workspace", id), slog.Any("err", err))
	}
	return wasRunning, nil
}

// ForgetWorkspace unregisters a stopped workspace. Its folder is kept; what
// the backend kept for it (its data directory: the conversation
// inventory) is removed under a journal (forgetLocked), and its id is
// never given to another folder.
func (h *Hub) ForgetWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error) {
	return h.forgetWorkspace(ctx, id, true)
}

// forgetWorkspace is ForgetWorkspace; reserve is false when the caller
// holds the reservation of the workspace's folder already (a clone job
// rolling back the registration it made).
func (h *Hub) forgetWorkspace(ctx context.Context, id string, reserve bool) (hub.WorkspaceAction, error) {
	unlock, err := h.wsLocks.Lock(ctx, id)
	if err != nil {
		return hub.WorkspaceAction{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	w, err := h.workspace(ctx, id)
	if err != nil {
		return hub.WorkspaceAction{}, err
	}
	if h.workspaceSession(id) != nil {
		return hub.WorkspaceAction{}, hub.Errorf(hub.Conflict, "stop the session for '%s' before forgetting it", id)
	}
	if err := h.fence(fenceWorkspace); err != nil {
		return hub.WorkspaceAction{}, err
	}
	if reserve {
		release, err := h.reserved.reserve(place{name: w.Backend}.key(w.Path))
		if err != nil {
			return hub.WorkspaceAction{}, err
		}
		defer release()
	}
	var journal int64
	err = h.commit(ctx, func(tx *writes) error {
		var err error
		journal, err = h.forgetLocked(tx, id)
		return err
	})
	switch {
	case hub.KindOf(err) == hub.NotFound:
		return hub.WorkspaceAction{}, hub.Errorf(hub.NotFound, "unknown workspace: %s", id)
	case err != nil:
		return hub.WorkspaceAction{}, hub.Wrap(hub.Internal, err, "failed to forget workspace")
	}
	h.mu.Lock()
	delete(h.ended, id)
	h.mu.Unlock()
	// The workspace is forgotten whatever becomes of its data: a failure
	// is logged and the next start tries again.
	_ = h.removeData(ctx, journal, id, w.Backend)
	return hub.WorkspaceAction{ID: id, Running: false, Forgotten: true}, nil
}

// SetDisplayName changes a workspace's display name, running or not;
// nothing else about the workspace changes.
func (h *Hub) SetDisplayName(ctx context.Context, id, name string) (hub.WorkspaceView, error) {
	name, err := hub.NormalizeDisplayName(name)
	if err != nil {
		return hub.WorkspaceView{}, err
	}
	unlock, err := h.wsLocks.Lock(ctx, id)
	if err != nil {
		return hub.WorkspaceView{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	// One write transaction reads, checks and writes: this is the Hub's
	// most frequent mutation, and a separate read first cost a second
	// transaction.
	var w hub.Workspace
	var fenced error
	err = h.commit(ctx, func(tx *writes) error {
		cur, err := tx.Workspace(id)
		if err != nil {
			return err
		}
		if fenced = h.fence(fenceWorkspace); fenced != nil {
			return fenced
		}
		w = cur
		if cur.DisplayName == name {
			return nil
		}
		w.DisplayName = name
		return tx.UpdateWorkspace(w)
	})
	switch {
	case fenced != nil:
		return hub.WorkspaceView{}, fenced
	case hub.KindOf(err) == hub.NotFound:
		return hub.WorkspaceView{}, hub.Errorf(hub.NotFound, "unknown workspace: %s", id)
	case err != nil:
		return hub.WorkspaceView{}, hub.Wrap(hub.Internal, err, "workspace display name could not be persisted")
	}
	return h.view(w), nil
}

// Close stops every running session and waits for the Hub's background
// work. The stopped workspaces keep their AutoStart mark, so the next Hub
// on the same store starts them again. It does not close the ports.
func (h *Hub) Close() error {
	h.idle.close()
	h.accounts.Close()
	h.push.close()
	h.closeClones()
	h.live.Close()
	h.attach.close()
	h.mu.Lock()
	h.closed = true
	var all []*runningWorkspace
	for _, ls := range h.running {
		select {
		case <-ls.rs.Done():
			continue // it ended on its own; its watcher records that
		default:
		}
		ls.stopping = true
		all = append(all, ls)
	}
	clear(h.running)
	h.mu.Unlock()
	errs := make(chan error, len(all))
	for _, ls := range all {
		go func() {
			if ls.detach != nil {
				ls.detach.Detach() // it runs on, for the next Hub to adopt
				errs <- nil
				return
			}
			errs <- ls.rs.Stop(context.Background())
		}()
	}
	var err error
	for range all {
		err = errors.Join(err, <-errs)
	}
	h.watchers.Wait()
	h.hosts.closeAll(h.log)
	h.stopBG()
	h.live.Wait()
	h.st.close()
	return err
}

// CheckRunning returns nil when the workspace's session runs, NotFound for
// an unknown workspace and Unavailable for a stopped one. The transport
// asks it before forwarding a request to the session, so a running
// session's idle period starts over (idlestop.go).
func (h *Hub) CheckRunning(ctx context.Context, id string) error {
	if h.workspaceSession(id) != nil {
		h.idle.touch(id)
		return nil
	}
	if _, err := h.workspace(ctx, id); err != nil {
		return err
	}
	return hub.Errorf(hub.Unavailable, "workspace %s is not running", id)
}

// BeginForward checks, before a request is forwarded to the workspace's
// session, that the session runs (as CheckRunning), and counts the
// request as use of the workspace until end is called: a long upload or
// answer is use throughout, so idle stop never cuts one short, and the
// idle period starts over when it ends. end may be called more than once.
func (h *Hub) BeginForward(ctx context.Context, id string) (end func(), err error) {
	if err := h.CheckRunning(ctx, id); err != nil {
		return nil, err
	}
	h.idle.forwarding(id, true)
	var once sync.Once
	return func() { once.Do(func() { h.idle.forwarding(id, false) }) }, nil
}

// DialWorkspaceSession opens a connection to the running session of a workspace,
// for the transport that forwards /s/{workspaceId}/ requests to it. A
// workspace that is not running is Unavailable.
func (h *Hub) DialWorkspaceSession(ctx context.Context, id string) (net.Conn, error) {
	ls := h.workspaceSession(id)
	if ls == nil {
		return nil, h.CheckRunning(ctx, id)
	}
	return ls.rs.Dial(ctx)
}
