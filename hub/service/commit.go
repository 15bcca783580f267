package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// This file is the Hub's one commit path, and only its mechanism. Every
// mutation of the store runs through commit: the store transaction first,
// and only once it has committed, the consequences of what it wrote, in
// the order it wrote them. A consequence is a value, a change, that says
// what it does to what the Hub keeps in memory (the registry, the device
// sessions, the facts shown, the state revision) and what it tells the
// live stream; each family states its own, one type per kind of change,
// in its changes_*.go file. The transaction a mutation writes through
// (writes, writes.go) offers the store's reads and recorded writes only:
// a write that states no consequence does not compile. Changes that
// happen outside the store (a workspace session that starts or ends,
// facts that refresh, device sessions another process revoked) take the
// same way through settle. No operation drops a cache or publishes an
// event by hand, and nothing but this file calls Store.Update (a test
// enforces it).

// A change is one consequence of a mutation.
type change interface {
	// apply brings what the Hub keeps in memory up to date with the
	// change. It runs with commitMu held, in commit order, and never
	// waits on a port. took false drops the change (it was already acted
	// on: a stop and the session's own watcher both report its end);
	// shown says a state answer may differ, so the revision advances.
	apply(h *Hub) (took, shown bool)
	// publish tells the live stream what the change means. It runs after
	// commitMu is released, so it must tolerate a later commit's having
	// been applied first; what the changes of one commit announce
	// together they gather in pub.
	publish(ctx context.Context, h *Hub, pub *publication)
}

// publication gathers what the changes of one commit announce together,
// once they have all published: the workspaces whose repositories'
// worktree inventory may have changed, and where they were before.
type publication struct {
	touched []hub.Workspace
	left    []live.Departure
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
// published afterwards, outside the lock. fn must not call commit or
// settle.
func (h *Hub) commit(ctx context.Context, fn func(*writes) error, also ...change) error {
	changes, err := h.commitLocked(ctx, fn, also)
	if err != nil {
		return err
	}
	h.publish(ctx, changes)
	return nil
}

func (h *Hub) commitLocked(ctx context.Context, fn func(*writes) error, also []change) ([]change, error) {
	h.commitMu.Lock()
	defer h.commitMu.Unlock()
	w := &writes{}
	var refused error // fn's own answer on the last attempt
	err := h.store.Update(ctx, func(tx hub.Tx) error {
		w.tx, w.changes = tx, w.changes[:0]
		refused = fn(w)
		return refused
	})
	if err != nil {
		if refused == nil { // the store failed, not fn: it may have written
			h.st.unsure()
			h.auth.unsure()
			h.cred.unsure()
		}
		return nil, err
	}
	return h.applyLocked(append(w.changes, also...)), nil
}

// settle acts on changes that happened outside the store, as commit does
// after a transaction.
func (h *Hub) settle(ctx context.Context, changes ...change) {
	h.commitMu.Lock()
	changes = h.applyLocked(changes)
	h.commitMu.Unlock()
	h.publish(ctx, changes)
}

// applyLocked applies changes in order and returns those that took
// effect, for publish; the state revision advances once when any may be
// shown. commitMu is held.
func (h *Hub) applyLocked(changes []change) []change {
	shown := false
	out := changes[:0:0]
	for _, c := range changes {
		took, s := c.apply(h)
		if !took {
			continue
		}
		shown = shown || s
		out = append(out, c)
	}
	if shown {
		h.st.bumped()
	}
	return out
}

// publish tells the live stream what changes mean for its clients, then
// announces the worktree changes they gathered. It runs after commitMu is
// released, since it may wait on git.
func (h *Hub) publish(ctx context.Context, changes []change) {
	var pub publication
	for _, c := range changes {
		c.publish(ctx, h, &pub)
	}
	if len(pub.touched) > 0 {
		h.live.AnnounceWorktrees(pub.left, pub.touched...)
	}
}
