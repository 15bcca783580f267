package service

import "context"

// The changes of the workspace sessions, which happen outside the store
// (settle) or with a commit (the start of a session that marks the
// workspace to start again): a session that started or ended, and facts
// that refreshed.

// workspaceSessionStarted: rw is the running session of workspace id.
type workspaceSessionStarted struct {
	id string
	rw *runningWorkspace
}

func (c workspaceSessionStarted) apply(h *Hub) (took, shown bool) {
	h.mu.Lock()
	h.running[c.id] = c.rw
	delete(h.ended, c.id)
	h.mu.Unlock()
	if c.rw.grant != nil {
		h.grants.put(c.rw.grant)
	}
	h.idle.started(c.id, c.rw)
	h.st.forgetWorkspaceSessionFacts(c.id)
	return true, true
}

// publish reopens the workspace's upstreams on the new session, unless
// it is no longer the workspace's (this was published after it ended).
func (c workspaceSessionStarted) publish(ctx context.Context, h *Hub, _ *publication) {
	if cur := h.workspaceSession(c.id); cur == nil || cur != c.rw {
		return
	}
	h.live.WorkspaceSessionStarted(ctx, c.id, c.rw.rs)
	h.push.reconcile()
}

// workspaceSessionEnded: the session rw of workspace id ended, stopped or
// on its own. A stop and the session's own watcher both report it: the
// second, or the end of a session that is no longer the workspace's, is
// dropped.
type workspaceSessionEnded struct {
	id string
	rw *runningWorkspace
}

func (c workspaceSessionEnded) apply(h *Hub) (took, shown bool) {
	h.mu.Lock()
	ours := h.running[c.id] == c.rw
	if ours {
		delete(h.running, c.id)
	}
	h.mu.Unlock()
	if c.rw.grant != nil {
		h.grants.end(c.rw.grant) // its broker refuses from now on, whoever reports the end
	}
	h.idle.ended(c.id, c.rw)
	if !ours {
		return false, false
	}
	h.st.forgetWorkspaceSessionFacts(c.id)
	return true, true
}

// publish ends the attachments to the session that ended, and fails the
// workspace's upstreams at once, unless the workspace already runs a
// newer session (this was published after that one started), whose
// upstreams, watch and marks are left alone.
func (c workspaceSessionEnded) publish(ctx context.Context, h *Hub, _ *publication) {
	h.attach.endWhere(ErrAttachmentWorkspaceStopped, func(a *attachment) bool { return a.rw == c.rw })
	if cur := h.workspaceSession(c.id); cur != nil && cur != c.rw {
		return
	}
	h.live.WorkspaceSessionEnded(ctx, c.id)
	h.push.reconcile()
}

// factsChanged: facts refreshed in the background differ from the ones
// the state shows.
type factsChanged struct{}

func (factsChanged) apply(*Hub) (took, shown bool)               { return true, true }
func (factsChanged) publish(context.Context, *Hub, *publication) {}
