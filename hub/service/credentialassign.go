package service

import (
	"context"
	"fmt"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// Assignments: a credential lent to a workspace as its authentication
// default for a host or its signing default. Each operation holds the
// workspace's lock (so a start never reads half of one), is refused while
// a recovery journal is pending, and decides its change with
// hub/credential's rules on the catalog read inside the transaction that
// writes it. A running session keeps what it was given until it
// restarts (credentialRestartRequired), except that its agent follows at
// once and its credential helper and signing program ask live.

// AssignCredential makes credential id a default of req's workspace
// (hubAssignCredential) and answers the assignment in effect.
func (h *Hub) AssignCredential(ctx context.Context, id string, req hub.AssignCredentialRequest) (hub.CredentialAssignment, error) {
	var inEffect []hub.CredentialAssignment
	err := h.changeAssignments(ctx, req.WorkspaceID, func(cat credential.Catalog) (credential.Change, error) {
		ch, err := cat.Assign(credential.AssignRequest{WorkspaceID: req.WorkspaceID, CredentialID: id, Role: req.Role, Host: req.Host, Replace: req.Replace, Policy: req.Policy})
		inEffect = ch.InEffect
		return ch, err
	}, func() error { return credential.CheckID(id) })
	if err != nil {
		return hub.CredentialAssignment{}, err
	}
	return inEffect[0], nil
}

// AssignWorkspaceCredentials replaces workspace ws's authentication
// default for one host and/or its signing default, both or neither
// (hubAssignWorkspaceCredentials), and answers them as they stand.
func (h *Hub) AssignWorkspaceCredentials(ctx context.Context, ws string, req hub.WorkspaceCredentialsRequest) ([]hub.CredentialAssignment, error) {
	var inEffect []hub.CredentialAssignment
	err := h.changeAssignments(ctx, ws, func(cat credential.Catalog) (credential.Change, error) {
		ch, err := cat.AssignPair(credential.PairRequest{WorkspaceID: ws, Authentication: req.Authentication, Signing: req.Signing, SigningPolicy: req.SigningPolicy})
		inEffect = ch.InEffect
		return ch, err
	}, nil)
	return inEffect, err
}

// UnassignCredential removes what req names of credential id from a
// workspace (hubUnassignCredential) and reports whether anything was
// there. A running workspace loses assignments only with req.Stop (409
// otherwise): its session is then stopped and the assignments removed in
// the same lifecycle operation, under its lock.
func (h *Hub) UnassignCredential(ctx context.Context, id string, req hub.UnassignCredentialRequest) (bool, error) {
	ur := credential.UnassignRequest{WorkspaceID: req.WorkspaceID, CredentialID: id, Role: req.Role, Host: req.Host}
	if _, err := (credential.Catalog{}).Unassign(ur); err != nil {
		return false, err // malformed: refused before anything is locked
	}
	if err := checkWorkspaceRef(req.WorkspaceID); err != nil {
		return false, err
	}
	unlock, err := h.wsLocks.Lock(ctx, req.WorkspaceID)
	if err != nil {
		return false, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if err := h.fence(fenceAssign); err != nil {
		return false, err
	}
	if err := h.refuseLinked(ctx, req.WorkspaceID); err != nil {
		return false, err
	}
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return false, hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	ch, err := cat.Unassign(ur)
	if err != nil {
		return false, err
	}
	running := h.workspaceSession(req.WorkspaceID) != nil
	if err := credential.StopGuard(ch, running, req.Stop); err != nil {
		return false, err
	}
	if ch.Empty() {
		return false, nil
	}
	if running {
		if _, err := h.stopLocked(ctx, req.WorkspaceID); err != nil {
			return false, err
		}
	}
	removed := false
	err = h.commit(ctx, func(tx *writes) error {
		cat, err := catalogIn(tx)
		if err != nil {
			return err
		}
		ch, err := cat.Unassign(ur)
		if err != nil {
			return err
		}
		for _, a := range ch.Removed {
			if _, err := tx.DeleteCredentialAssignment(a); err != nil {
				return err
			}
		}
		removed = len(ch.Removed) > 0
		return nil
	})
	if err != nil {
		return false, storeError(err, "credential assignment could not be removed")
	}
	return removed, nil
}

// changeAssignments runs one assignment change of workspace ws under its
// lock: check (when set) refuses malformed input first; decide answers
// the change from the catalog read in the transaction, which then writes
// it. An unknown workspace is NotFound.
func (h *Hub) changeAssignments(ctx context.Context, ws string, decide func(credential.Catalog) (credential.Change, error), check func() error) error {
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := checkWorkspaceRef(ws); err != nil {
		return err
	}
	unlock, err := h.wsLocks.Lock(ctx, ws)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if err := h.fence(fenceAssign); err != nil {
		return err
	}
	if err := h.refuseLinked(ctx, ws); err != nil {
		return err
	}
	var refused error
	err = h.commit(ctx, func(tx *writes) error {
		if _, err := tx.Workspace(ws); err != nil {
			if hub.KindOf(err) == hub.NotFound {
				refused = hub.Errorf(hub.NotFound, "unknown workspace: %s", ws)
				return refused
			}
			return err
		}
		cat, err := catalogIn(tx)
		if err != nil {
			return err
		}
		ch, err := decide(cat)
		if err != nil {
			refused = err
			return err
		}
		return writeChange(tx, ch)
	})
	switch {
	case refused != nil:
		return refused
	case err != nil:
		return hub.Wrap(hub.Internal, err, "credential assignment could not be stored")
	}
	return nil
}

// writeChange commits an assignment change: Removed, then Put.
func writeChange(tx *writes, ch credential.Change) error {
	for _, a := range ch.Removed {
		if _, err := tx.DeleteCredentialAssignment(a); err != nil {
			return err
		}
	}
	for _, a := range ch.Put {
		if err := tx.PutCredentialAssignment(a); err != nil {
			return fmt.Errorf("assignment of %s: %w", a.CredentialID, err)
		}
	}
	return nil
}

// checkSelections checks a registration's credential selections against
// the catalog before anything is changed (the contract's "credential
// selection conflict" is a 409; a malformed id or host a 400). The
// registration writes them in its own transaction (onboard), where they
// are decided again.
func (h *Hub) checkSelections(ctx context.Context, auth []hub.AuthenticationSelection, signing string) error {
	if len(auth) == 0 && signing == "" {
		return nil
	}
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	_, err = cat.Onboard("", auth, signing)
	return err
}

// checkWorkspaceRef refuses a request that names no workspace; an id no
// workspace has is the store's to say.
func checkWorkspaceRef(ws string) error {
	if ws == "" {
		return hub.Errorf(hub.Invalid, "workspaceId must be a non-empty string")
	}
	return nil
}
