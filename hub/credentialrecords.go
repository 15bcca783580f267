package hub

import (
	"errors"
	"fmt"
	"slices"
)

// What a store keeps of the credentials family is only what the records
// name (CredentialStore's contract): these checks say what that is, so
// every store — the SQLite adapter, the fake — refuses the same records
// in the same words. The rules of hub/credential never let through what
// they refuse; a refusal here is a bug of the caller, never a client's.

// CheckCredentialType refuses a type outside CredentialTypes.
func CheckCredentialType(t CredentialType) error {
	if !slices.Contains(CredentialTypes(), t) {
		return fmt.Errorf("unknown credential type %q", t)
	}
	return nil
}

// CheckCapabilityList refuses a capability outside Capabilities, or one
// listed twice.
func CheckCapabilityList(cs []Capability) error {
	for i, c := range cs {
		if !slices.Contains(Capabilities(), c) {
			return fmt.Errorf("unknown capability %q", c)
		}
		if slices.Contains(cs[:i], c) {
			return fmt.Errorf("capability %q listed twice", c)
		}
	}
	return nil
}

// CheckAssignmentRecord refuses an assignment outside the places a
// workspace has — a signing default (no host) or an authentication
// default for one host — or with a policy outside UsePolicies.
func CheckAssignmentRecord(a CredentialAssignment) error {
	switch {
	case !slices.Contains(CredentialRoles(), a.Role):
		return fmt.Errorf("unknown credential role %q", a.Role)
	case a.Role == RoleSigning && a.Host != "":
		return errors.New("a signing assignment cannot have a host")
	case a.Role == RoleAuthentication && a.Host == "":
		return errors.New("an authentication assignment needs a host")
	case !slices.Contains(UsePolicies(), a.Policy):
		return fmt.Errorf("unknown use policy %q", a.Policy)
	}
	return nil
}

// CheckToolName refuses a tool outside CredentialTools.
func CheckToolName(tool CredentialToolName) error {
	if !slices.Contains(CredentialTools(), tool) {
		return fmt.Errorf("unknown credential tool %q", tool)
	}
	return nil
}
