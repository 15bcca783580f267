package hub

import "context"

// HubState is the Hub's summary for a client (GET /api/hub/state). The
// workspace registry, and with it the state's workspace list, arrives with
// the workspaces family; until then the transport reports an empty list.
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
}

// State returns the Hub's state as the caller sees it.
func (h *Hub) State(ctx context.Context, caller Session) (HubState, error) {
	return HubState{
		Version:              h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
	}, nil
}
