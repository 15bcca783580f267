package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

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
		UsePolicy   hub.UsePolicy      `json:"usePolicy"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	as, err := a.credentials.AssignCredential(r.Context(), r.PathValue("credentialId"),
		hub.AssignCredentialRequest{WorkspaceID: req.WorkspaceID, Role: req.Role, Host: req.Host, Replace: req.Replace, Policy: req.UsePolicy})
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
		Authentication *struct {
			CredentialID string        `json:"credentialId"`
			Host         string        `json:"host"`
			UsePolicy    hub.UsePolicy `json:"usePolicy"`
		} `json:"authentication"`
		Signing *struct {
			CredentialID string        `json:"credentialId"`
			UsePolicy    hub.UsePolicy `json:"usePolicy"`
		} `json:"signing"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	var pair hub.WorkspaceCredentialsRequest
	if req.Authentication != nil {
		pair.Authentication = &hub.AuthenticationSelection{CredentialID: req.Authentication.CredentialID, Host: req.Authentication.Host,
			Policy: req.Authentication.UsePolicy}
	}
	if req.Signing != nil {
		pair.Signing, pair.SigningPolicy = &req.Signing.CredentialID, req.Signing.UsePolicy
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

func (a *api) handleCredentialUses(w http.ResponseWriter, r *http.Request, _ caller) error {
	uses, err := a.credentials.CredentialUses(r.Context(), r.PathValue("credentialId"))
	if err != nil {
		return err
	}
	type record struct {
		At          string                `json:"at"`
		WorkspaceID string                `json:"workspaceId"`
		Purpose     hub.CredentialPurpose `json:"purpose"`
		Host        string                `json:"host,omitempty"`
		Outcome     hub.UseOutcome        `json:"outcome"`
		By          string                `json:"by,omitempty"`
	}
	out := struct {
		Uses []record `json:"uses"`
	}{Uses: make([]record, len(uses))}
	for i, u := range uses {
		out.Uses[i] = record{At: u.At.UTC().Format(time.RFC3339Nano), WorkspaceID: u.WorkspaceID, Purpose: u.Purpose, Host: u.Host, Outcome: u.Outcome, By: u.By}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleListApprovals(w http.ResponseWriter, r *http.Request, _ caller) error {
	type record struct {
		ID             string                `json:"id"`
		WorkspaceID    string                `json:"workspaceId"`
		CredentialID   string                `json:"credentialId"`
		CredentialName string                `json:"credentialName"`
		Purpose        hub.CredentialPurpose `json:"purpose"`
		Host           string                `json:"host,omitempty"`
		RequestedAt    string                `json:"requestedAt"`
	}
	aps := a.credentials.CredentialApprovals(r.Context())
	out := struct {
		Approvals []record `json:"approvals"`
	}{Approvals: make([]record, 0, len(aps))}
	for _, ap := range aps {
		name := ap.CredentialName
		if name == "" {
			name = ap.CredentialID // deleted meanwhile: its use fails anyway
		}
		out.Approvals = append(out.Approvals, record{ID: ap.ID, WorkspaceID: ap.WorkspaceID, CredentialID: ap.CredentialID, CredentialName: name,
			Purpose: ap.Purpose, Host: ap.Host, RequestedAt: ap.RequestedAt.UTC().Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleDecideApproval(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Allow *bool `json:"allow"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.Allow == nil {
		return hub.Errorf(hub.Invalid, "allow is required")
	}
	if err := a.credentials.DecideCredentialApproval(r.Context(), c.DeviceSession, r.PathValue("approvalId"), *req.Allow); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Decided bool `json:"decided"`
	}{true})
	return nil
}
