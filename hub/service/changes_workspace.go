package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// The consequences of the registry's writes (writes.go): a workspace
// registered or updated, or one that left the registry.

// workspaceSaved is a workspace registered (created) or updated.
type workspaceSaved struct {
	w       hub.Workspace // the new record
	created bool          // a new registration
	// Set by apply: whether its path changed (or may have: the registry
	// was not loaded), and where it was.
	moved bool
	left  live.Departure
}

func (c *workspaceSaved) apply(h *Hub) (took, shown bool) {
	c.moved, c.left = h.st.applyWorkspaceLocked(c.w, c.created, false)
	return true, true
}

// publish opens the activity feed of a new workspace, and has the
// worktrees of the repositories it joined (and left, when it moved)
// announced.
func (c *workspaceSaved) publish(_ context.Context, h *Hub, pub *publication) {
	switch {
	case c.created:
		h.live.WorkspaceRegistered(c.w.ID)
		pub.touched = append(pub.touched, c.w)
	case c.moved:
		pub.touched = append(pub.touched, c.w)
		pub.left = append(pub.left, c.left)
	}
}

// workspaceDeleted is a workspace that left the registry, with the record
// it had (its path is what the consequences need).
type workspaceDeleted struct {
	w    hub.Workspace
	left live.Departure // set by apply
}

func (c *workspaceDeleted) apply(h *Hub) (took, shown bool) {
	_, c.left = h.st.applyWorkspaceLocked(c.w, false, true)
	return true, true
}

// publish ends the workspace's activity and has the worktrees of its
// repository announced.
func (c *workspaceDeleted) publish(ctx context.Context, h *Hub, pub *publication) {
	h.live.WorkspaceForgotten(ctx, c.w.ID)
	pub.touched = append(pub.touched, c.w)
	pub.left = append(pub.left, c.left)
}

// settingSaved is a Hub-wide setting set, or cleared (set false).
type settingSaved struct {
	key, value string
	set        bool
}

func (c settingSaved) apply(h *Hub) (took, shown bool) {
	value := c.value
	if !c.set {
		value = ""
	}
	return true, h.st.applySettingLocked(c.key, value)
}

func (settingSaved) publish(context.Context, *Hub, *publication) {}

// storedOnly is the consequence of a write whose record is all there is:
// nothing the Hub keeps in memory depends on it, and nobody is told (the
// writes that use it say why).
type storedOnly struct{}

func (storedOnly) apply(*Hub) (took, shown bool)               { return true, false }
func (storedOnly) publish(context.Context, *Hub, *publication) {}
