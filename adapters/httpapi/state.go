package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

type hubState struct {
	Version              string             `json:"version"`
	HubAPIRevision       int                `json:"hubApiRevision"`
	WorkspaceAPIRevision int                `json:"workspaceApiRevision"`
	Workspaces           []hubWorkspace     `json:"workspaces"`
	WorkspaceDefaults    *workspaceDefaults `json:"workspaceDefaults,omitempty"`
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
	if v.Missing {
		out.Availability = "missing"
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
	st, err := a.hub.State(r.Context(), c.DeviceSession)
	if err != nil {
		return err
	}
	// The answer is written by hand around the encoded listing, keeping
	// hubState's field order; hubState stays the shape's one definition.
	head, err := json.Marshal(hubState{Version: st.Version, HubAPIRevision: st.HubAPIRevision,
		WorkspaceAPIRevision: st.WorkspaceAPIRevision})
	if err != nil {
		return err
	}
	head, _, ok := bytes.Cut(head, []byte(`,"workspaces":`))
	if !ok {
		return errors.New("state answer: no workspaces field to fill")
	}
	ws := a.listing.encode(st.WorkspacesRevision, st.Workspaces)
	buf := make([]byte, 0, len(head)+len(ws)+256)
	buf = append(buf, head...)
	buf = append(buf, `,"workspaces":`...)
	buf = append(buf, ws...)
	if st.Defaults != nil {
		d, err := json.Marshal(toWorkspaceDefaults(*st.Defaults))
		if err != nil {
			return err
		}
		buf = append(buf, `,"workspaceDefaults":`...)
		buf = append(buf, d...)
	}
	buf = append(buf, "}\n"...)
	writeRawJSON(w, http.StatusOK, buf)
	return nil
}

// encodedListing keeps the JSON of the last workspace listing the Hub
// returned, by its revision: with 50 workspaces, encoding was most of a
// state answer, and the listing rarely changes between two requests.
type encodedListing struct {
	mu   sync.Mutex
	rev  uint64
	json []byte // shared and read-only
}

// encode returns the JSON array of views, the listing with revision rev.
func (e *encodedListing) encode(rev uint64, views []hub.WorkspaceView) []byte {
	e.mu.Lock()
	if e.json != nil && e.rev == rev {
		b := e.json
		e.mu.Unlock()
		return b
	}
	e.mu.Unlock()
	out := make([]hubWorkspace, len(views))
	for i, v := range views {
		out[i] = toHubWorkspace(v)
	}
	b, err := json.Marshal(out)
	if err != nil {
		// hubWorkspace holds only strings, bools and ints.
		panic(err)
	}
	e.mu.Lock()
	if rev >= e.rev {
		e.rev, e.json = rev, b
	}
	e.mu.Unlock()
	return b
}

func (a *api) handleGetDefaults(w http.ResponseWriter, r *http.Request, _ caller) error {
	d, err := a.hub.WorkspaceDefaults(r.Context())
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
	if err := decodeJSON(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.DefaultWorkspaceParent == nil {
		return hub.Errorf(hub.Invalid, "defaultWorkspaceParent is required")
	}
	var dir *string
	if err := json.Unmarshal(req.DefaultWorkspaceParent, &dir); err != nil {
		return hub.Errorf(hub.Invalid, "defaultWorkspaceParent must be a string or null")
	}
	d, err := a.hub.SetDefaultParent(r.Context(), dir)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWorkspaceDefaults(d))
	return nil
}
