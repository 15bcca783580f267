package httpapi

import "net/http"

type hubState struct {
	Version              string `json:"version"`
	HubAPIRevision       int    `json:"hubApiRevision"`
	WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
	// Workspaces is empty, never null: no workspace can be registered
	// until the workspaces family is built.
	Workspaces []struct{} `json:"workspaces"`
}

func (a *api) handleState(w http.ResponseWriter, r *http.Request, c caller) error {
	st, err := a.hub.State(r.Context(), c.Session)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hubState{Version: st.Version, HubAPIRevision: st.HubAPIRevision,
		WorkspaceAPIRevision: st.WorkspaceAPIRevision, Workspaces: []struct{}{}})
	return nil
}
