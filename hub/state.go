package hub

import "context"

// HubState is the Hub's summary for a client (GET /api/hub/state).
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
	Workspaces           []WorkspaceView // shared and read-only
	// WorkspacesRevision identifies Workspaces: equal revisions mean equal
	// listings, so what a client derives from one may be reused.
	WorkspacesRevision uint64
	// Defaults is nil when the preference cannot be resolved (the home
	// directory is unknown); the state is still served.
	Defaults *WorkspaceDefaults
}

// State returns the Hub's state as the caller sees it. Every Hub user sees
// every workspace: the contract has no per-user registry.
func (h *Hub) State(ctx context.Context, caller DeviceSession) (HubState, error) {
	// Snapshots answer without a transaction: this is the Hub's most
	// frequent request.
	l, err := h.listing(ctx)
	if err != nil {
		return HubState{}, err
	}
	_, configured, err := h.snapshot(ctx)
	if err != nil {
		return HubState{}, err
	}
	var defaults *WorkspaceDefaults
	if d, err := h.resolveDefaults(configured); err == nil {
		defaults = &d
	}
	return HubState{
		Version:              h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Workspaces:           l.Views,
		WorkspacesRevision:   l.Revision,
		Defaults:             defaults,
	}, nil
}
