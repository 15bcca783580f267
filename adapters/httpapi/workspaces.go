package httpapi

import (
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

type workspaceAction struct {
	ID               string `json:"id"`
	Running          bool   `json:"running"`
	WasRunning       *bool  `json:"wasRunning,omitempty"`
	Forgotten        bool   `json:"forgotten,omitempty"`
	RecoveryRequired string `json:"recoveryRequired,omitempty"`
}

func toAction(act hub.WorkspaceAction) workspaceAction {
	return workspaceAction{ID: act.ID, Running: act.Running, WasRunning: act.WasRunning,
		Forgotten: act.Forgotten, RecoveryRequired: act.RecoveryRequired}
}

type createWorkspaceRequest struct {
	Path    string `json:"path"`
	Backend string `json:"backend"` // a Wharf extension: "" is local
	Init    bool   `json:"init"`
	Start   *bool  `json:"start"`
}

type authenticationSelection struct {
	CredentialID string `json:"credentialId"`
	Host         string `json:"host"`
}

type configureWorkspaceRequest struct {
	Path           string                    `json:"path"`
	Backend        string                    `json:"backend"` // a Wharf extension: "" is local
	DisplayName    *string                   `json:"displayName"`
	Authentication []authenticationSelection `json:"authentication"`
	Signing        *string                   `json:"signing"`
	Init           bool                      `json:"init"`
	Start          bool                      `json:"start"`
}

type createConfiguredWorkspaceRequest struct {
	Parent         string                    `json:"parent"`
	Backend        string                    `json:"backend"` // a Wharf extension: "" is local
	FolderName     string                    `json:"folderName"`
	DisplayName    *string                   `json:"displayName"`
	Authentication []authenticationSelection `json:"authentication"`
	Signing        *string                   `json:"signing"`
	Start          bool                      `json:"start"`
}

type onboardedWorkspace struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Path        string `json:"path"`
	Backend     string `json:"backend"`
	Running     bool   `json:"running"`
}

type onboardingResult struct {
	Workspace        onboardedWorkspace `json:"workspace"`
	Started          bool               `json:"started"`
	StartError       *string            `json:"startError"`
	RecoveryRequired string             `json:"recoveryRequired,omitempty"`
}

type displayNameRequest struct {
	DisplayName *string `json:"displayName"`
}

type workspaceSummary struct {
	Workspace hubWorkspace `json:"workspace"`
}

func toSelections(in []authenticationSelection) []hub.AuthenticationSelection {
	out := make([]hub.AuthenticationSelection, len(in))
	for i, s := range in {
		out[i] = hub.AuthenticationSelection{CredentialID: s.CredentialID, Host: s.Host}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func writeOnboarding(w http.ResponseWriter, res hub.OnboardingResult) {
	out := onboardingResult{
		Workspace: onboardedWorkspace{ID: res.Workspace.ID, DisplayName: res.Workspace.DisplayName,
			Path: res.Workspace.Path, Backend: res.Workspace.Backend, Running: res.Workspace.Running},
		Started:          res.Started,
		RecoveryRequired: res.RecoveryRequired,
	}
	if res.StartError != "" {
		out.StartError = &res.StartError
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *api) handleCreateWorkspace(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createWorkspaceRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	start := req.Start == nil || *req.Start // the legacy operation starts by default
	act, err := a.workspaces.Register(r.Context(), hub.RegisterRequest{Path: req.Path, Backend: req.Backend, Init: req.Init, Start: start})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAction(act))
	return nil
}

func (a *api) handleConfigureWorkspace(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req configureWorkspaceRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.DisplayName == nil {
		return hub.Errorf(hub.Invalid, "displayName is required")
	}
	res, err := a.workspaces.Configure(r.Context(), hub.ConfigureRequest{Path: req.Path, Backend: req.Backend, DisplayName: *req.DisplayName,
		Authentication: toSelections(req.Authentication), Signing: deref(req.Signing), Init: req.Init, Start: req.Start})
	if err != nil {
		return err
	}
	writeOnboarding(w, res)
	return nil
}

func (a *api) handleCreateConfiguredWorkspace(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createConfiguredWorkspaceRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.DisplayName == nil {
		return hub.Errorf(hub.Invalid, "displayName is required")
	}
	res, err := a.workspaces.CreateConfigured(r.Context(), hub.CreateConfiguredRequest{Parent: req.Parent, Backend: req.Backend,
		FolderName: req.FolderName, DisplayName: *req.DisplayName,
		Authentication: toSelections(req.Authentication), Signing: deref(req.Signing), Start: req.Start})
	if err != nil {
		return err
	}
	writeOnboarding(w, res)
	return nil
}

func (a *api) handleDisplayName(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req displayNameRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.DisplayName == nil {
		return hub.Errorf(hub.Invalid, "displayName is required")
	}
	v, err := a.workspaces.SetDisplayName(r.Context(), r.PathValue("workspaceId"), *req.DisplayName)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workspaceSummary{Workspace: toHubWorkspace(v)})
	return nil
}

// lifecycle adapts a lifecycle operation on one workspace. These take no
// body; one sent anyway is ignored, as the contract lists no 400 for them.
func (a *api) lifecycle(op func(ws WorkspaceService, r *http.Request, id string) (hub.WorkspaceAction, error)) handler {
	return func(w http.ResponseWriter, r *http.Request, _ caller) error {
		act, err := op(a.workspaces, r, r.PathValue("workspaceId"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, toAction(act))
		return nil
	}
}

func startWorkspace(ws WorkspaceService, r *http.Request, id string) (hub.WorkspaceAction, error) {
	return ws.StartWorkspace(r.Context(), id)
}

func stopWorkspace(ws WorkspaceService, r *http.Request, id string) (hub.WorkspaceAction, error) {
	return ws.StopWorkspace(r.Context(), id)
}

func forgetWorkspace(ws WorkspaceService, r *http.Request, id string) (hub.WorkspaceAction, error) {
	return ws.ForgetWorkspace(r.Context(), id)
}
