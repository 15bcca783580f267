package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// Revocation: disable and delete (research §8.4, the lesson of a dozen
// fixes in the earlier system). A key leaves every agent the moment the
// vault locks it, and an HTTPS token is checked at each use, so neither
// needs more than the credential's lock. A provider CLI's token is
// different: its value sits in the environment of every session that was
// given it, where nothing can take it back, so those sessions are stopped
// first. To be sure no session is given it meanwhile, revoke holds the
// lock of every workspace that has it assigned or whose running session
// was given it — a start holds its workspace's lock while it reads what
// to lend — and the transaction that revokes checks that no other
// workspace has been assigned it since; if one has, it starts over with
// the wider set.

// maxRevokeRounds bounds how often revoke widens its set of workspaces
// before it gives up: each round is an assignment that raced it.
const maxRevokeRounds = 8

// errWidened says the workspaces holding a credential grew while revoke
// held the locks of the ones it knew.
var errWidened = errors.New("the workspaces holding the credential changed")

// revoke changes credential id through fn, in one transaction, after
// locking it out of every agent and stopping the sessions a provider
// CLI's token reached. A stop that fails changes nothing of the
// credential (500); once the sessions are stopped they stay stopped
// whatever the transaction does.
func (h *Hub) revoke(ctx context.Context, id string, fn func(tx *writes, c hub.Credential) error) error {
	for range maxRevokeRounds {
		cat, _, _, err := h.catalog(ctx)
		if err != nil {
			return hub.Wrap(hub.Internal, err, "credentials could not be read")
		}
		c, ok := cat.Credential(id)
		if !ok {
			return unknownCredential(id)
		}
		var held []string
		if credential.RevokeStopsSessions(c) {
			held = h.holders(cat, id)
		}
		unlock, err := h.wsLocks.LockAll(ctx, held)
		if err != nil {
			return hub.Wrap(hub.Unavailable, err, "request cancelled")
		}
		err = h.revokeLocked(ctx, id, held, fn)
		unlock()
		if !errors.Is(err, errWidened) {
			return err
		}
	}
	return hub.Errorf(hub.Unavailable, "the credential's assignments kept changing; try again")
}

// revokeLocked is revoke's round with the workspaces of held locked.
func (h *Hub) revokeLocked(ctx context.Context, id string, held []string, fn func(tx *writes, c hub.Credential) error) error {
	unlock, err := h.credLocks.Lock(ctx, id)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	cat, _, _, err := h.catalog(ctx)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	c, ok := cat.Credential(id)
	if !ok {
		return unknownCredential(id)
	}
	cli := credential.RevokeStopsSessions(c)
	if cli && !subset(h.holders(cat, id), held) {
		return errWidened
	}
	if cli {
		for _, ws := range held {
			if !h.grants.lent(ws, id) {
				continue
			}
			if _, err := h.stopLocked(ctx, ws); err != nil {
				return hub.Wrap(hub.Internal, err, fmt.Sprintf("the credential was not changed: the session for '%s', which holds its token, could not be stopped", ws))
			}
		}
	}
	h.lockKey(id)
	err = h.commit(ctx, func(tx *writes) error {
		c, err := tx.Credential(id)
		if err != nil {
			return err
		}
		if cli {
			cat, err := catalogIn(tx)
			if err != nil {
				return err
			}
			if !subset(assignedTo(cat, id), held) {
				return errWidened
			}
		}
		return fn(tx, c)
	})
	switch {
	case errors.Is(err, errWidened):
		return err
	case hub.KindOf(err) == hub.NotFound:
		return unknownCredential(id)
	case err != nil:
		return storeError(err, "credential could not be changed")
	}
	return nil
}

// holders are the workspaces credential id reaches: those it is assigned
// to, and those whose running session was given it (an unassignment
// leaves a running session what it was given until it restarts).
func (h *Hub) holders(cat credential.Catalog, id string) []string {
	out := assignedTo(cat, id)
	for _, ws := range h.grants.holding(id) {
		if !slices.Contains(out, ws) {
			out = append(out, ws)
		}
	}
	slices.Sort(out)
	return out
}

// assignedTo are the workspaces credential id is assigned to, sorted.
func assignedTo(cat credential.Catalog, id string) []string {
	var out []string
	for _, a := range cat.AssignmentsOf(id) {
		if !slices.Contains(out, a.WorkspaceID) {
			out = append(out, a.WorkspaceID)
		}
	}
	slices.Sort(out)
	return out
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
