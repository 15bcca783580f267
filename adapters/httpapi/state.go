package httpapi

import (
	"net/http"

	"github.com/wharfhub/wharf/hub"
)

type hubState struct {
	Version              string         `json:"version"`
	HubAPIRevision       int            `json:"hubApiRevision"`
	WorkspaceAPIRevision int            `json:"workspaceApiRevision"`
	Workspaces           []hubWorkspace `json:"workspaces"`
}

type hubWorkspace struct {
	ID                        string                `json:"id"`
	DisplayName               string                `json:"displayName"`
	Path                      string                `json:"path"`
	Backend                   string                `json:"backend"`
	Running                   bool                  `json:"running"`
	CredentialRestartRequired bool                  `json:"credentialRestartRequired"`
	CredentialAssignments     credentialAssignments `json:"credentialAssignments"`
	WorkspaceAPIRevision      int                   `json:"workspaceApiRevision"`
}

type credentialAssignments struct {
	Authentication []string `json:"authentication"`
	Signing        []string `json:"signing"`
}

func (a *api) handleState(w http.ResponseWriter, r *http.Request, c caller) error {
	st, err := a.hub.State(r.Context(), c.Session)
	if err != nil {
		return err
	}
	out := hubState{Version: st.Version, HubAPIRevision: st.HubAPIRevision,
		WorkspaceAPIRevision: st.WorkspaceAPIRevision, Workspaces: make([]hubWorkspace, 0, len(st.Workspaces))}
	for _, ws := range st.Workspaces {
		out.Workspaces = append(out.Workspaces, wireWorkspace(ws))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func wireWorkspace(ws hub.HubWorkspace) hubWorkspace {
	return hubWorkspace{ID: ws.ID, DisplayName: ws.DisplayName, Path: ws.Path, Backend: ws.Backend, Running: ws.Running,
		CredentialAssignments: credentialAssignments{Authentication: []string{}, Signing: []string{}},
		WorkspaceAPIRevision:  hub.WorkspaceAPIRevision}
}
