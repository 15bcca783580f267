package hub

import "context"

// HubState is the Hub's summary for a client (GET /api/hub/state).
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
	Workspaces           []WorkspaceView
	// Defaults is nil when the preference cannot be resolved (the home
	// directory is unknown); the state is still served.
	Defaults *WorkspaceDefaults
}

// State returns the Hub's state as the caller sees it. Every Hub user sees
// every workspace: the contract has no per-user registry.
func (h *Hub) State(ctx context.Context, caller Session) (HubState, error) {
	ws, err := h.Workspaces(ctx)
	if err != nil {
		return HubState{}, err
	}
	var defaults *WorkspaceDefaults
	if d, err := h.WorkspaceDefaults(ctx); err == nil {
		defaults = &d
	} else if KindOf(err) != Unavailable {
		return HubState{}, err
	}
	return HubState{
		Version:              h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Workspaces:           ws,
		Defaults:             defaults,
	}, nil
}
