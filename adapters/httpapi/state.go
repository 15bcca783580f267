package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

type hubState struct {
	Version              string             `json:"version"`
	HubAPIRevision       int                `json:"hubApiRevision"`
	WorkspaceAPIRevision int                `json:"workspaceApiRevision"`
	Workspaces           []hubWorkspace     `json:"workspaces"`
	WorkspaceDefaults    *workspaceDefaults `json:"workspaceDefaults,omitempty"`
	WorktreeAPI          string             `json:"worktreeApi,omitempty"`
}

type hubWorkspace struct {
	ID                        string                    `json:"id"`
	DisplayName               string                    `json:"displayName"`
	Path                      string                    `json:"path"`
	Backend                   string                    `json:"backend"`
	Running                   bool                      `json:"running"`
	CredentialRestartRequired bool                      `json:"credentialRestartRequired"`
	CredentialAssignments     credentialAssignmentNames `json:"credentialAssignments"`
	WorkspaceAPIRevision      int                       `json:"workspaceApiRevision"`
	Shells                    *[]shell                  `json:"shells,omitempty"`
	RepositoryID              string                    `json:"repositoryId,omitempty"`
	Branch                    string                    `json:"branch,omitempty"`
	Detached                  bool                      `json:"detached,omitempty"`
	Availability              string                    `json:"availability,omitempty"`
	ParentID                  string                    `json:"parentId,omitempty"`
	SourceRef                 string                    `json:"sourceRef,omitempty"`
	Ownership                 string                    `json:"ownership,omitempty"`
	CreateWorktree            bool                      `json:"createWorktree,omitempty"`
	EndedReason               string                    `json:"endedReason,omitempty"`
}

type credentialAssignmentNames struct {
	Authentication []string `json:"authentication"`
	Signing        []string `json:"signing"`
}

type shell struct {
	Attached bool   `json:"attached"`
	Label    string `json:"label"`
}

type workspaceDefaults struct {
	Configured          *string `json:"configured"`
	ConfiguredAvailable bool    `json:"configuredAvailable"`
	Effective           string  `json:"effective"`
}

func toHubWorkspace(v hub.WorkspaceView) hubWorkspace {
	out := hubWorkspace{
		ID: v.ID, DisplayName: v.DisplayName, Path: v.Path, Backend: v.Backend, Running: v.Running,
		CredentialRestartRequired: v.CredentialRestartRequired,
		CredentialAssignments:     credentialAssignmentNames{Authentication: v.Authentication, Signing: v.Signing},
		WorkspaceAPIRevision:      v.WorkspaceAPIRevision,
		RepositoryID:              v.RepositoryID,
		Branch:                    v.Branch,
		Detached:                  v.RepositoryID != "" && v.Branch == "",
		ParentID:                  v.ParentID,
		SourceRef:                 v.SourceRef,
		Ownership:                 string(v.Ownership),
		CreateWorktree:            v.CreateWorktree,
		EndedReason:               v.EndedReason,
	}
	if out.CredentialAssignments.Authentication == nil {
		out.CredentialAssignments.Authentication = []string{}
	}
	if out.CredentialAssignments.Signing == nil {
		out.CredentialAssignments.Signing = []string{}
	}
	if v.Shells != nil {
		shells := make([]shell, len(v.Shells))
		for i, s := range v.Shells {
			shells[i] = shell{Attached: s.Attached, Label: s.Label}
		}
		out.Shells = &shells
	}
	switch {
	case v.Missing:
		out.Availability = "missing"
	case v.Replaced:
		out.Availability = "replaced"
	}
	return out
}

func toWorkspaceDefaults(d hub.WorkspaceDefaults) workspaceDefaults {
	out := workspaceDefaults{ConfiguredAvailable: d.ConfiguredAvailable, Effective: d.Effective}
	if d.Configured != "" {
		c := d.Configured
		out.Configured = &c
	}
	return out
}

func (a *api) handleState(w http.ResponseWriter, r *http.Request, c caller) error {
	st, err := a.state.State(r.Context(), c.DeviceSession)
	if err != nil {
		return err
	}
	writeRawJSON(w, http.StatusOK, st.Encoded(encodeState))
	return nil
}

// encodeState is the HubState answer of st. The core keeps it with the
// snapshot, so it is encoded once per state, not once per request.
func encodeState(st *hub.HubState) []byte {
	out := hubState{Version: st.Version, HubAPIRevision: st.HubAPIRevision,
		WorkspaceAPIRevision: st.WorkspaceAPIRevision, Workspaces: make([]hubWorkspace, len(st.Workspaces)),
		WorktreeAPI: worktreeAPI}
	for i, v := range st.Workspaces {
		out.Workspaces[i] = toHubWorkspace(v)
	}
	if st.Defaults != nil {
		d := toWorkspaceDefaults(*st.Defaults)
		out.WorkspaceDefaults = &d
	}
	b, err := json.Marshal(out)
	if err != nil {
		// hubState holds only strings, bools, ints and their slices.
		panic(err)
	}
	return append(b, '\n')
}

func (a *api) handleGetDefaults(w http.ResponseWriter, r *http.Request, _ caller) error {
	d, err := a.state.WorkspaceDefaults(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspaceDefaults(d))
	return nil
}

type updateDefaultsRequest struct {
	// Raw, to tell an absent field (refused) from null (clears the
	// preference).
	DefaultWorkspaceParent json.RawMessage `json:"defaultWorkspaceParent"`
}

func (a *api) handleSetDefaults(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req updateDefaultsRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.DefaultWorkspaceParent == nil {
		return hub.Errorf(hub.Invalid, "defaultWorkspaceParent is required")
	}
	var dir *string
	if err := json.Unmarshal(req.DefaultWorkspaceParent, &dir); err != nil {
		return hub.Errorf(hub.Invalid, "defaultWorkspaceParent must be a string or null")
	}
	d, err := a.state.SetDefaultParent(r.Context(), dir)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspaceDefaults(d))
	return nil
}
