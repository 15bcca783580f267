package credential

import (
	"slices"

	"github.com/wharfhub/wharf/hub"
)

var (
	errDeleteUnconfirmed = hub.Errorf(hub.Invalid, "credential deletion requires confirmation")
	errRemovalRunning    = hub.Errorf(hub.Conflict, "credential assignment removal conflicts with the running workspace session; stop it first or pass stop: true")
	errSelectionHost     = hub.Errorf(hub.Conflict, "conflicting authentication defaults for one host")
	errSelectionID       = hub.Errorf(hub.Invalid, "authentication credentialId is required")
)

// UnassignRequest names the assignments of one credential to remove from
// a workspace (hubUnassignCredential): its authentication default for Host
// (Role authentication), its signing default (Role signing), or every
// assignment it has there (no Role, no Host).
type UnassignRequest struct {
	WorkspaceID, CredentialID string
	Role                      hub.CredentialRole
	// Host is the authentication default's host as sent (normalized here).
	Host string
}

// Unassign answers what r removes. Nothing to remove, an unknown
// credential or workspace included, is an empty Change (`removed: false`),
// never NotFound. Invalid: a malformed id, an unknown role, a host without
// role authentication or that role without a host, an invalid host.
// Whether a running workspace may lose them is StopGuard's.
func (c Catalog) Unassign(r UnassignRequest) (Change, error) {
	if err := CheckID(r.CredentialID); err != nil {
		return Change{}, err
	}
	host := ""
	if r.Role != "" {
		var err error
		if host, err = roleHost(r.Role, r.Host); err != nil {
			return Change{}, err
		}
	} else if r.Host != "" {
		return Change{}, errHostNotAllowed
	}
	var ch Change
	for _, a := range c.Assignments {
		if a.WorkspaceID == r.WorkspaceID && a.CredentialID == r.CredentialID &&
			(r.Role == "" || a.Role == r.Role && a.Host == host) {
			ch.Removed = append(ch.Removed, a)
		} else {
			ch.After = append(ch.After, a)
		}
	}
	SortAssignments(ch.After)
	return ch, nil
}

// StopGuard answers whether an unassignment may go ahead on a workspace:
// removing assignments from a running session needs stop (the session is
// then stopped and the assignments removed in one lifecycle operation),
// Conflict otherwise. Nothing to remove needs nothing.
func StopGuard(ch Change, running, stop bool) error {
	if len(ch.Removed) > 0 && running && !stop {
		return errRemovalRunning
	}
	return nil
}

// Delete answers what deleting credential id removes with it (research
// §8.3): Invalid "credential deletion requires confirmation" without
// confirm; NotFound "unknown credential: <id>"; Conflict "credential is
// assigned to N workspace default(s)" while it has assignments and
// unassign is false. Removed lists the assignments that go with it (the
// store deletes them with the record), After the ones that stay.
func (c Catalog) Delete(id string, confirm, unassign bool) (Change, error) {
	if err := CheckID(id); err != nil {
		return Change{}, err
	}
	if !confirm {
		return Change{}, errDeleteUnconfirmed
	}
	if _, ok := c.Credential(id); !ok {
		return Change{}, hub.Errorf(hub.NotFound, "unknown credential: %s", id)
	}
	var ch Change
	for _, a := range c.Assignments {
		if a.CredentialID == id {
			ch.Removed = append(ch.Removed, a)
		} else {
			ch.After = append(ch.After, a)
		}
	}
	if len(ch.Removed) > 0 && !unassign {
		return Change{}, hub.Errorf(hub.Conflict, "credential is assigned to %d workspace default(s)", len(ch.Removed))
	}
	SortAssignments(ch.After)
	return ch, nil
}

// Onboard answers the assignments a new workspace starts with
// (hubConfigureWorkspace, hubCreateConfiguredWorkspace): each
// authentication selection and the signing one (an id, or "" for none),
// checked as Assign checks them, before anything is registered. A
// malformed id or host is Invalid; every other refusal — an unknown,
// disabled or unfit credential, a token for another host, two selections
// for one host ("conflicting authentication defaults for one host"), two
// tokens for one CLI — is the contract's "credential selection conflict",
// a Conflict, with the message Assign would give.
func (c Catalog) Onboard(workspaceID string, authentication []hub.AuthenticationSelection, signing string) (Change, error) {
	var want []hub.CredentialAssignment
	for _, s := range authentication {
		if s.CredentialID == "" {
			return Change{}, errSelectionID
		}
		a, err := shape(workspaceID, s.CredentialID, hub.RoleAuthentication, s.Host, s.Policy)
		if err != nil {
			return Change{}, err
		}
		if slices.ContainsFunc(want, func(w hub.CredentialAssignment) bool { return w.Host == a.Host }) {
			return Change{}, errSelectionHost
		}
		want = append(want, a)
	}
	if signing != "" {
		a, err := shape(workspaceID, signing, hub.RoleSigning, "", "")
		if err != nil {
			return Change{}, err
		}
		want = append(want, a)
	}
	for _, a := range want {
		if err := c.admit(a); err != nil {
			return Change{}, hub.Errorf(hub.Conflict, "%s", hub.MessageOf(err))
		}
	}
	return c.apply(workspaceID, want, true)
}
