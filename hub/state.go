package hub

import "context"

// HubState is the Hub's summary for a client (GET /api/hub/state).
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
	// Workspaces lists the registered workspaces; never nil.
	Workspaces []HubWorkspace
}

// HubWorkspace is one registered workspace as Hub state reports it.
type HubWorkspace struct {
	ID          string
	DisplayName string
	Path        string
	Backend     string
	Running     bool
}

// State returns the Hub's state as the caller sees it.
func (h *Hub) State(ctx context.Context, caller Session) (HubState, error) {
	return HubState{
		Version:              h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Workspaces:           []HubWorkspace{},
	}, nil
}
