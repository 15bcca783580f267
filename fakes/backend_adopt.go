package fakes

import (
	"context"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// A host's sessions outlive the Hub (hub.SessionAdopter): every fake
// session can be let go of (Detach), and keeps "running" on its machine
// until a Hub adopts it (a host's place, Adopt) or reaps it. A local
// Backend never adopts: only a host's place offers Adopt, so the core
// never lets a local session go.

var _ hub.SessionDetacher = (*workspaceSession)(nil)

// Detach lets the session go: Done closes, as at a stop, while the
// session goes on running on its machine until adopted or reaped.
func (s *workspaceSession) Detach() {
	s.b.mu.Lock()
	if s.b.running[s.id] == s {
		s.b.detached[s.id] = true
	}
	s.b.mu.Unlock()
	s.end()
}

// adopt returns a session of spec's workspace, running again for this
// Hub, when one was let go and not reaped since; NotFound otherwise.
func (b *Backend) adopt(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "the host could not be reached")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.detached[spec.WorkspaceID] {
		return nil, hub.Errorf(hub.NotFound, "no session of this workspace runs there")
	}
	if _, ok := b.running[spec.WorkspaceID]; ok {
		return nil, hub.Errorf(hub.NotFound, "the session already belongs to this Hub")
	}
	delete(b.detached, spec.WorkspaceID)
	b.adopts[spec.WorkspaceID]++
	b.specs[spec.WorkspaceID] = spec
	s := newWorkspaceSession(b, spec.WorkspaceID)
	b.running[spec.WorkspaceID] = s
	return s, nil
}

// reapDetached ends the sessions let go and not adopted, returning their
// workspaces, sorted.
func (b *Backend) reapDetached() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := b.detachedLocked()
	clear(b.detached)
	return ids
}

// Detached reports the workspaces whose sessions were let go and run on,
// sorted.
func (b *Backend) Detached() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.detachedLocked()
}

// detachedLocked is Detached, b.mu held.
func (b *Backend) detachedLocked() []string {
	var ids []string
	for id := range b.detached {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Adoptions reports how often a session of id was adopted.
func (b *Backend) Adoptions(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.adopts[id]
}

// EndDetached ends the session of id that was let go, as a host that
// rebooted would: there is nothing of it left to adopt or reap.
func (b *Backend) EndDetached(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.detached, id)
}
