package httpapi

import (
	"context"
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// WorktreeService is the worktree family (worktrees.go). A refusal is
// not an error: it is in the answer, and the handler writes it with 200
// and ok false; an error is for the transport (an unknown workspace, a
// cancelled request).
type WorktreeService interface {
	WorktreeInventory(ctx context.Context, caller hub.DeviceSession, source string) (hub.WorktreeInventory, error)
	FetchWorktreeRefs(ctx context.Context, caller hub.DeviceSession, source string) (hub.WorktreeRefs, *hub.WorktreeError, bool, error)
	CreateWorktree(ctx context.Context, caller hub.DeviceSession, req hub.CreateWorktreeRequest) (hub.WorktreeResult, error)
	OpenWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error)
	RegisterWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error)
	ForgetWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error)
	PreflightDeleteWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreePreflight, *hub.WorktreeError, error)
	DeleteWorktree(ctx context.Context, caller hub.DeviceSession, req hub.DeleteWorktreeRequest) (hub.WorktreeResult, error)
}

// worktreeAPI is where the family is served, advertised in the Hub state.
const worktreeAPI = "/api/hub/worktrees"

// errNoSource is the 400 of a request that names no source workspace.
var errNoSource = hub.Errorf(hub.Invalid, "source workspace id required")

func (a *api) handleListWorktrees(w http.ResponseWriter, r *http.Request, c caller) error {
	source := r.URL.Query().Get("source")
	if source == "" {
		return errNoSource
	}
	inv, err := a.worktrees.WorktreeInventory(r.Context(), c.DeviceSession, source)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Inventory inventoryJSON `json:"inventory"`
	}{inventoryOf(inv)})
	return nil
}

func (a *api) handleFetchWorktreeRefs(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		SourceWorkspaceID string `json:"sourceWorkspaceId"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.SourceWorkspaceID == "" {
		return errNoSource
	}
	refs, refusal, read, err := a.worktrees.FetchWorktreeRefs(r.Context(), c.DeviceSession, req.SourceWorkspaceID)
	if err != nil {
		return err
	}
	out := struct {
		OK    bool               `json:"ok"`
		Refs  *refsJSON          `json:"refs,omitempty"`
		Error *worktreeErrorJSON `json:"error,omitempty"`
	}{OK: refusal == nil, Error: worktreeErrorOf(refusal)}
	if read {
		rj := refsOf(refs)
		out.Refs = &rj
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// worktreeRequestJSON is the body of open, register, forget and
// preflight-delete.
type worktreeRequestJSON struct {
	SourceWorkspaceID string `json:"sourceWorkspaceId"`
	Reference         string `json:"reference"`
	Start             bool   `json:"start"`
}

// decodeWorktreeRequest reads a body naming a source and a reference;
// start only where the operation takes it.
func decodeWorktreeRequest(r *http.Request, withStart bool) (hub.WorktreeRequest, error) {
	var req worktreeRequestJSON
	var err error
	if withStart {
		err = httpjson.Decode(r, defaultBodyLimit, false, &req)
	} else {
		var body struct {
			SourceWorkspaceID string `json:"sourceWorkspaceId"`
			Reference         string `json:"reference"`
		}
		err = httpjson.Decode(r, defaultBodyLimit, false, &body)
		req.SourceWorkspaceID, req.Reference = body.SourceWorkspaceID, body.Reference
	}
	if err != nil {
		return hub.WorktreeRequest{}, err
	}
	if req.SourceWorkspaceID == "" {
		return hub.WorktreeRequest{}, errNoSource
	}
	return hub.WorktreeRequest{SourceWorkspaceID: req.SourceWorkspaceID, Reference: req.Reference, Start: req.Start}, nil
}

func (a *api) handleCreateWorktree(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		SourceWorkspaceID string         `json:"sourceWorkspaceId"`
		Mode              string         `json:"mode"`
		Branch            string         `json:"branch"`
		Base              *worktreeBaseJ `json:"base"`
		BaseRef           string         `json:"baseRef"`
		Start             bool           `json:"start"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.SourceWorkspaceID == "" {
		return errNoSource
	}
	switch hub.WorktreeMode(req.Mode) {
	case hub.NewBranch, hub.ExistingLocal, hub.RemoteTracking:
	default:
		return hub.Errorf(hub.Invalid, "mode must be new-branch, existing-local or remote-tracking")
	}
	in := hub.CreateWorktreeRequest{SourceWorkspaceID: req.SourceWorkspaceID, Mode: hub.WorktreeMode(req.Mode),
		Branch: req.Branch, BaseRef: req.BaseRef, Start: req.Start}
	if req.Base != nil {
		if req.Base.Kind != "local" && req.Base.Kind != "remote" || req.Base.Ref == "" {
			return hub.Errorf(hub.Invalid, "base needs a kind (local or remote) and a ref")
		}
		in.Base = &hub.WorktreeBase{Remote: req.Base.Kind == "remote", Ref: req.Base.Ref}
	}
	res, err := a.worktrees.CreateWorktree(r.Context(), c.DeviceSession, in)
	return writeWorktreeResult(w, res, err)
}

// worktreeBaseJ is a create's base ref, named exactly.
type worktreeBaseJ struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// worktreeOp serves open, register and forget.
func (a *api) worktreeOp(withStart bool, op func(WorktreeService, context.Context, hub.DeviceSession, hub.WorktreeRequest) (hub.WorktreeResult, error)) handler {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		req, err := decodeWorktreeRequest(r, withStart)
		if err != nil {
			return err
		}
		res, err := op(a.worktrees, r.Context(), c.DeviceSession, req)
		return writeWorktreeResult(w, res, err)
	}
}

func (a *api) handlePreflightDeleteWorktree(w http.ResponseWriter, r *http.Request, c caller) error {
	req, err := decodeWorktreeRequest(r, false)
	if err != nil {
		return err
	}
	p, refusal, err := a.worktrees.PreflightDeleteWorktree(r.Context(), c.DeviceSession, req)
	if err != nil {
		return err
	}
	out := preflightJSON{OK: refusal == nil, Error: worktreeErrorOf(refusal)}
	if p.Checkout.CheckoutID != "" {
		cj := checkoutOf(p.Checkout)
		out.Checkout = &cj
	}
	if refusal == nil {
		out.RequiresStop = &p.RequiresStop
		out.LocalData = localDataOf(p.LocalData)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleDeleteWorktree(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		SourceWorkspaceID    string `json:"sourceWorkspaceId"`
		Reference            string `json:"reference"`
		Confirm              bool   `json:"confirm"`
		Stop                 bool   `json:"stop"`
		LocalDataFingerprint string `json:"localDataFingerprint"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	if req.SourceWorkspaceID == "" {
		return errNoSource
	}
	res, err := a.worktrees.DeleteWorktree(r.Context(), c.DeviceSession, hub.DeleteWorktreeRequest{
		WorktreeRequest: hub.WorktreeRequest{SourceWorkspaceID: req.SourceWorkspaceID, Reference: req.Reference},
		Confirm:         req.Confirm, Stop: req.Stop, LocalDataFingerprint: req.LocalDataFingerprint})
	return writeWorktreeResult(w, res, err)
}

// writeWorktreeResult writes an operation's answer: 200 whether it
// succeeded or was refused.
func writeWorktreeResult(w http.ResponseWriter, res hub.WorktreeResult, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resultOf(res))
	return nil
}
