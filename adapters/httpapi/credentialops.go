package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// The credential operations on one credential (state, test, delete,
// assignments), the workspace pair operation and the tools.

func (a *api) handleUnlockCredential(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Passphrase string `json:"passphrase"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.credentials.UnlockCredential(r.Context(), a.requester(r, c), r.PathValue("credentialId"), req.Passphrase)
	return writeCredential(w, v, err)
}

// credentialState adapts lock, enable and disable: an empty object in,
// the credential out.
func (a *api) credentialState(op func(CredentialService, *http.Request, string) (hub.CredentialView, error)) handler {
	return func(w http.ResponseWriter, r *http.Request, _ caller) error {
		if err := emptyBody(r); err != nil {
			return err
		}
		v, err := op(a.credentials, r, r.PathValue("credentialId"))
		return writeCredential(w, v, err)
	}
}

func lockCredential(s CredentialService, r *http.Request, id string) (hub.CredentialView, error) {
	return s.LockCredential(r.Context(), id)
}

func enableCredential(s CredentialService, r *http.Request, id string) (hub.CredentialView, error) {
	return s.EnableCredential(r.Context(), id)
}

func disableCredential(s CredentialService, r *http.Request, id string) (hub.CredentialView, error) {
	return s.DisableCredential(r.Context(), id)
}

func (a *api) handleTestCredential(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := emptyBody(r); err != nil {
		return err
	}
	results, err := a.credentials.TestCredential(r.Context(), a.requester(r, c), r.PathValue("credentialId"))
	if err != nil {
		setRetryAfter(w, err)
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Results []readinessRecord `json:"results"`
	}{toReadiness(results)})
	return nil
}

func (a *api) handleDeleteCredential(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Confirm  *bool `json:"confirm"`
		Unassign bool  `json:"unassign"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	confirm := req.Confirm != nil && *req.Confirm
	if err := a.credentials.DeleteCredential(r.Context(), r.PathValue("credentialId"), confirm, req.Unassign); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Deleted bool `json:"deleted"`
	}{true})
	return nil
}

func (a *api) handleAssignCredential(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		WorkspaceID string             `json:"workspaceId"`
		Role        hub.CredentialRole `json:"role"`
		Host        string             `json:"host"`
		Replace     bool               `json:"replace"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	as, err := a.credentials.AssignCredential(r.Context(), r.PathValue("credentialId"),
		hub.AssignCredentialRequest{WorkspaceID: req.WorkspaceID, Role: req.Role, Host: req.Host, Replace: req.Replace})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Assignment assignmentRecord `json:"assignment"`
	}{toAssignments([]hub.CredentialAssignment{as})[0]})
	return nil
}

func (a *api) handleUnassignCredential(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		WorkspaceID string             `json:"workspaceId"`
		Role        hub.CredentialRole `json:"role"`
		Host        string             `json:"host"`
		Stop        bool               `json:"stop"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	removed, err := a.credentials.UnassignCredential(r.Context(), r.PathValue("credentialId"),
		hub.UnassignCredentialRequest{WorkspaceID: req.WorkspaceID, Role: req.Role, Host: req.Host, Stop: req.Stop})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Removed bool `json:"removed"`
	}{removed})
	return nil
}

func (a *api) handleAssignWorkspaceCredentials(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Authentication *authenticationSelection `json:"authentication"`
		Signing        *struct {
			CredentialID string `json:"credentialId"`
		} `json:"signing"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	var pair hub.WorkspaceCredentialsRequest
	if req.Authentication != nil {
		pair.Authentication = &hub.AuthenticationSelection{CredentialID: req.Authentication.CredentialID, Host: req.Authentication.Host}
	}
	if req.Signing != nil {
		pair.Signing = &req.Signing.CredentialID
	}
	as, err := a.credentials.AssignWorkspaceCredentials(r.Context(), r.PathValue("workspaceId"), pair)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Assignments []assignmentRecord `json:"assignments"`
	}{toAssignments(as)})
	return nil
}

func (a *api) handleListCredentialTools(w http.ResponseWriter, r *http.Request, _ caller) error {
	tools := a.credentials.CredentialTools(r.Context())
	out := struct {
		Tools []toolRecord `json:"tools"`
	}{Tools: make([]toolRecord, len(tools))}
	for i, t := range tools {
		out.Tools[i] = toToolRecord(t)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleSetCredentialTool(w http.ResponseWriter, r *http.Request, _ caller) error {
	// path is required and may be null: a field that is absent decodes
	// as a nil RawMessage, a null as the four bytes "null".
	var req struct {
		Path json.RawMessage `json:"path"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	var path *string
	switch {
	case req.Path == nil:
		return hub.Errorf(hub.Invalid, "path is required (null clears the override)")
	case string(req.Path) != "null":
		if err := json.Unmarshal(req.Path, &path); err != nil {
			return hub.Errorf(hub.Invalid, "path must be a string or null")
		}
	}
	t, err := a.credentials.SetCredentialTool(r.Context(), r.PathValue("tool"), path)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toolAnswer{Tool: toToolRecord(t)})
	return nil
}

func (a *api) handleTestCredentialTool(w http.ResponseWriter, r *http.Request, _ caller) error {
	if err := emptyBody(r); err != nil {
		return err
	}
	t, err := a.credentials.TestCredentialTool(r.Context(), r.PathValue("tool"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toolAnswer{Tool: toToolRecord(t)})
	return nil
}
