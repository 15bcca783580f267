package service

import (
	"context"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// This file is the Hub's one commit path. Every mutation of the store runs
// through commit: the store transaction first, and only once it has
// committed, the consequences of what it wrote, from the list the
// transaction recorded: the in-memory registry and device sessions, the
// state revision, the caches, and the events of the live stream. Changes
// that happen outside the store (a workspace session that starts or ends,
// facts that refresh) take the same way through settle. No operation
// drops a cache or publishes an event by hand.

// changeKind says what one change is.
type changeKind int

const (
	workspaceSaved          changeKind = iota // a workspace was registered (created) or updated
	workspaceDeleted                          // a workspace left the registry (old: its last record)
	settingSaved                              // a Hub-wide setting was set or cleared
	deviceSessionCreated                      // a login
	deviceSessionRevoked                      // a logout or revocation
	deviceSessionsExpired                     // the expired device sessions were deleted
	userSignedOut                             // every device session of a user ended (password change, removal)
	workspaceSessionStarted                   // a workspace session started (runtime)
	workspaceSessionEnded                     // a workspace session ended, stopped or on its own (runtime)
	factsChanged                              // refreshed facts differ from the ones shown (runtime)
)

// change is one consequence of a mutation. Only the fields its kind
// names are set.
type change struct {
	kind    changeKind
	w       hub.Workspace // saved: the new record; deleted: the record it had
	created bool          // saved: a new registration
	moved   bool          // saved: its path changed (or may have: the registry was not loaded)
	left    departure     // moved or deleted: where the workspace was
	key     string        // settingSaved
	value   string
	set     bool                    // settingSaved: false when cleared
	session hub.DeviceSession       // deviceSessionCreated
	digest  hub.DeviceSessionDigest // deviceSessionRevoked
	user    string                  // userSignedOut
	at      time.Time               // deviceSessionsExpired: the sessions not active then
	id      string                  // workspaceSessionStarted, workspaceSessionEnded
	rw      *runningWorkspace       // workspaceSessionStarted, workspaceSessionEnded
}

// recorder is the Tx a mutation writes through: it passes every call on
// and records what the writes that succeeded changed, so the commit path
// acts on exactly what was written.
type recorder struct {
	hub.Tx
	changes []change
}

func (r *recorder) add(c change) { r.changes = append(r.changes, c) }

func (r *recorder) CreateWorkspace(w hub.Workspace) error {
	err := r.Tx.CreateWorkspace(w)
	if err == nil {
		r.add(change{kind: workspaceSaved, w: w, created: true})
	}
	return err
}

func (r *recorder) UpdateWorkspace(w hub.Workspace) error {
	err := r.Tx.UpdateWorkspace(w)
	if err == nil {
		r.add(change{kind: workspaceSaved, w: w})
	}
	return err
}

// DeleteWorkspace records the record the workspace had, read in the same
// transaction: its path is what the consequences need.
func (r *recorder) DeleteWorkspace(id string) error {
	old, err := r.Tx.Workspace(id)
	if err != nil {
		return err
	}
	if err := r.Tx.DeleteWorkspace(id); err != nil {
		return err
	}
	r.add(change{kind: workspaceDeleted, w: old})
	return nil
}

func (r *recorder) PutSetting(key, value string) error {
	err := r.Tx.PutSetting(key, value)
	if err == nil {
		r.add(change{kind: settingSaved, key: key, value: value, set: true})
	}
	return err
}

func (r *recorder) DeleteSetting(key string) error {
	err := r.Tx.DeleteSetting(key)
	if err == nil {
		r.add(change{kind: settingSaved, key: key})
	}
	return err
}

func (r *recorder) CreateDeviceSession(s hub.DeviceSession) error {
	err := r.Tx.CreateDeviceSession(s)
	if err == nil {
		r.add(change{kind: deviceSessionCreated, session: s})
	}
	return err
}

func (r *recorder) RevokeDeviceSession(d hub.DeviceSessionDigest, at time.Time) error {
	err := r.Tx.RevokeDeviceSession(d, at)
	if err == nil {
		r.add(change{kind: deviceSessionRevoked, digest: d})
	}
	return err
}

func (r *recorder) DeleteExpiredDeviceSessions(now time.Time) (int, error) {
	n, err := r.Tx.DeleteExpiredDeviceSessions(now)
	if err == nil {
		r.add(change{kind: deviceSessionsExpired, at: now})
	}
	return n, err
}

func (r *recorder) DeleteDeviceSessionsOfUser(name string) (int, error) {
	n, err := r.Tx.DeleteDeviceSessionsOfUser(name)
	if err == nil {
		r.add(change{kind: userSignedOut, user: name})
	}
	return n, err
}

func (r *recorder) DeleteUser(name string) error {
	err := r.Tx.DeleteUser(name)
	if err == nil {
		r.add(change{kind: userSignedOut, user: name})
	}
	return err
}

// commit runs fn in a write transaction of the store and, once it has
// committed, acts on what fn wrote, then on also: the changes the
// mutation made outside the store that take effect with the commit (a
// session it started). When fn refuses (returns an error) the transaction
// rolls back and nothing is acted on. When the store fails instead, what
// the Hub keeps in memory is read again before it is next used: a store
// may report an error for a write it applied.
//
// Commits are serialized with each other and with settle, so their
// consequences are applied in the order they committed; the events are
// published afterwards, outside the lock, and publish must tolerate a
// later commit's having been applied first. fn must not call commit or
// settle.
func (h *Hub) commit(ctx context.Context, fn func(hub.Tx) error, also ...change) error {
	changes, err := h.commitLocked(ctx, fn, also)
	if err != nil {
		return err
	}
	h.publish(ctx, changes)
	return nil
}

func (h *Hub) commitLocked(ctx context.Context, fn func(hub.Tx) error, also []change) ([]change, error) {
	h.commitMu.Lock()
	defer h.commitMu.Unlock()
	rec := &recorder{}
	var refused error // fn's own answer on the last attempt
	err := h.store.Update(ctx, func(tx hub.Tx) error {
		rec.Tx, rec.changes = tx, rec.changes[:0]
		refused = fn(rec)
		return refused
	})
	if err != nil {
		if refused == nil { // the store failed, not fn: it may have written
			h.st.unsure()
			h.auth.unsure()
		}
		return nil, err
	}
	return h.applyLocked(append(rec.changes, also...)), nil
}

// settle acts on changes that happened outside the store, as commit does
// after a transaction.
func (h *Hub) settle(ctx context.Context, changes ...change) {
	h.commitMu.Lock()
	changes = h.applyLocked(changes)
	h.commitMu.Unlock()
	h.publish(ctx, changes)
}

// applyLocked brings what the Hub keeps in memory up to date with
// changes: the registry, the running sessions, the facts shown, the device
// sessions, and the state revision. It returns the changes that took
// effect, for publish: a session end already acted on (a stop and the
// session's own watcher both report it) is dropped. It never waits on a
// port. commitMu is held.
func (h *Hub) applyLocked(changes []change) []change {
	shown := false // whether a state answer may differ
	out := changes[:0:0]
	for _, c := range changes {
		switch c.kind {
		case workspaceSaved, workspaceDeleted, settingSaved:
			c.moved, c.left = h.st.applyLocked(c)
			shown = true
		case workspaceSessionStarted:
			h.mu.Lock()
			h.running[c.id] = c.rw
			h.mu.Unlock()
			h.st.forgetWorkspaceSessionFacts(c.id)
			shown = true
		case workspaceSessionEnded:
			h.mu.Lock()
			ours := h.running[c.id] == c.rw
			if ours {
				delete(h.running, c.id)
			}
			h.mu.Unlock()
			if !ours {
				continue
			}
			h.st.forgetWorkspaceSessionFacts(c.id)
			shown = true
		case factsChanged:
			shown = true
		case deviceSessionCreated, deviceSessionRevoked, deviceSessionsExpired, userSignedOut:
			h.auth.apply(c)
		}
		out = append(out, c)
	}
	if shown {
		h.st.rev.Add(1)
	}
	return out
}

// publish tells the live stream what changes mean for its clients: the
// activity feeds of a new or departed workspace, the worktree
// invalidations of the repositories touched, the start and end of a
// session's upstreams, and the end of the streams of a device session that
// is gone. It runs after commitMu is released, since it may wait on git.
func (h *Hub) publish(ctx context.Context, changes []change) {
	var touched []hub.Workspace // whose repositories' worktree inventory may have changed
	var left []departure        // where they were, for the repositories they left
	for _, c := range changes {
		switch c.kind {
		case workspaceSaved:
			if c.created {
				h.live.registered(c.w.ID)
				touched = append(touched, c.w)
			} else if c.moved {
				touched = append(touched, c.w)
				left = append(left, c.left)
			}
		case workspaceDeleted:
			h.live.clearActivity(c.w.ID, true)
			touched = append(touched, c.w)
			left = append(left, c.left)
		case workspaceSessionStarted:
			h.live.workspaceSessionStarted(c.id, c.rw)
		case workspaceSessionEnded:
			h.live.workspaceSessionEnded(c.id, c.rw)
		case deviceSessionRevoked:
			h.endLiveOf(func(ls *LiveStream) bool { return ls.owner == c.digest })
		case userSignedOut:
			h.endLiveOf(func(ls *LiveStream) bool { return ls.user == c.user })
		}
	}
	if len(touched) > 0 {
		h.announceWorktrees(ctx, left, touched...)
	}
}
