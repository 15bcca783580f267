package service

import (
	"context"
	"path"

	"github.com/wharfhub/wharf/hub"
)

// A linked worktree has no credentials of its own: its sessions follow
// the assignments of its repository's main workspace, live (the grant
// reads them at every request), and assigning to it is refused with the
// main workspace's name. A tree whose main checkout is not registered
// keeps its own assignments, as any workspace.

// mainWorkspaceOf returns the registered workspace of the main checkout
// of the linked worktree workspace ws, if ws is one.
func (h *Hub) mainWorkspaceOf(ctx context.Context, ws string) (hub.Workspace, bool) {
	w, err := h.workspace(ctx, ws)
	if err != nil {
		return hub.Workspace{}, false
	}
	pl, err := h.placeOf(ctx, w.Backend)
	if err != nil {
		return hub.Workspace{}, false
	}
	repo, err := pl.git.Inspect(ctx, w.Path)
	if err != nil || repo.TopLevel == "" || path.Base(repo.CommonDir) != ".git" {
		return hub.Workspace{}, false
	}
	main := path.Dir(repo.CommonDir)
	if repo.TopLevel == main {
		return hub.Workspace{}, false
	}
	m, ok, err := h.registeredAt(ctx, pl.name, main)
	if err != nil || !ok || m.ID == ws {
		return hub.Workspace{}, false
	}
	return m, true
}

// credentialPolicyOf names the workspace whose assignments ws's sessions
// follow: its main workspace when it is a linked worktree, else itself.
func (h *Hub) credentialPolicyOf(ctx context.Context, ws string) string {
	if m, ok := h.mainWorkspaceOf(ctx, ws); ok {
		return m.ID
	}
	return ws
}

// refuseLinked refuses an assignment change of a linked worktree.
func (h *Hub) refuseLinked(ctx context.Context, ws string) error {
	if m, ok := h.mainWorkspaceOf(ctx, ws); ok {
		return hub.Errorf(hub.Conflict, "workspace %s is a linked worktree: it uses the credentials of its main workspace %s; assign them there", ws, m.ID)
	}
	return nil
}
