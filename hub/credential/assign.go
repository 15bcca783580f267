package credential

import (
	"cmp"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// Catalog is what the assignment rules read: every credential and every
// assignment, as the store holds them. The rules never change it; they
// answer a Change for the service to commit.
type Catalog struct {
	Credentials []hub.Credential
	Assignments []hub.CredentialAssignment
}

// Change is what an assignment operation does to the catalog's
// assignments. It is committed by deleting Removed, then putting Put
// (hub.CredentialStore); an empty Change commits nothing.
type Change struct {
	// Put are the assignments to record; Removed those that go, the ones a
	// Put replaces included.
	Put, Removed []hub.CredentialAssignment
	// After is every assignment once the change is made, in the store's
	// order (SortAssignments).
	After []hub.CredentialAssignment
	// InEffect are the assignments the request named as they stand after
	// it, in the request's order (authentication, then signing): what
	// assign and the workspace pair operation answer.
	InEffect []hub.CredentialAssignment
}

// Empty reports whether the change commits nothing (an idempotent
// re-assignment, an unassignment with nothing to remove).
func (c Change) Empty() bool { return len(c.Put) == 0 && len(c.Removed) == 0 }

var (
	errRole           = hub.Errorf(hub.Invalid, "role must be authentication or signing")
	errHostNotAllowed = hub.Errorf(hub.Invalid, "host is allowed only with role authentication")
	errHostRequired   = hub.Errorf(hub.Invalid, "host is required for role authentication")
	errCannotSign     = hub.Errorf(hub.Invalid, "credential cannot sign: it has neither ssh-signing nor openpgp-signing")
	errCannotAuth     = hub.Errorf(hub.Invalid, "credential cannot authenticate: it has none of ssh-authentication, https-git, github-cli and gitlab-cli")
	errPairEmpty      = hub.Errorf(hub.Invalid, "at least one of authentication and signing is required")
	errPolicy         = hub.Errorf(hub.Invalid, "usePolicy must be always, ask-once or ask-every-time")
	errOneGitHubCLI   = hub.Errorf(hub.Conflict, "a workspace can use the GitHub CLI credential for only one provider host")
	errOneGitLabCLI   = hub.Errorf(hub.Conflict, "a workspace can use the GitLab CLI credential for only one provider host")
)

// AssignRequest asks that a credential become one of a workspace's
// defaults (hubAssignCredential).
type AssignRequest struct {
	WorkspaceID, CredentialID string
	Role                      hub.CredentialRole
	// Host is the authentication default's host as sent (normalized
	// here); signing takes none.
	Host string
	// Replace lets the credential take a default another one holds.
	Replace bool
	// Policy is the assignment's use policy: "" keeps the one in effect
	// for the same credential, else hub.PolicyAlways.
	Policy hub.UsePolicy
}

// Assign answers what making r's credential a default of r's workspace
// changes (research §8.1), or why it may not:
//   - Invalid: a malformed id, role or host (a host for signing, none for
//     authentication), a credential whose capabilities do not fit the role
//     (signing needs ssh-signing or openpgp-signing; authentication
//     ssh-authentication, https-git, github-cli or gitlab-cli), or a token
//     for another host than the assignment's ("credential host does not
//     match assignment host: <host>");
//   - NotFound "unknown credential: <id>";
//   - Conflict "credential is disabled: <id>"; "credential assignment
//     conflicts with existing default: <id>" when another credential
//     holds the default and r.Replace is false (with it, that one is
//     replaced); or a second token for the GitHub CLI, or for the GitLab
//     CLI, in the workspace (their token variables are not per host).
//
// Re-assigning the credential that holds the default changes nothing and
// answers it in InEffect. The workspace's existence, a linked worktree
// and a pending journal are the service's to check.
func (c Catalog) Assign(r AssignRequest) (Change, error) {
	want, err := c.resolve(r.WorkspaceID, r.CredentialID, r.Role, r.Host, r.Policy)
	if err != nil {
		return Change{}, err
	}
	return c.apply(want.WorkspaceID, []hub.CredentialAssignment{want}, r.Replace)
}

// PairRequest replaces a workspace's authentication default for one host
// and/or its signing default (hubAssignWorkspaceCredentials); nil leaves a
// role as it is.
type PairRequest struct {
	WorkspaceID    string
	Authentication *hub.AuthenticationSelection
	// Signing is the id of the new signing default.
	Signing *string
	// SigningPolicy is its use policy, as AssignRequest.Policy (the
	// authentication default's is in its selection).
	SigningPolicy hub.UsePolicy
}

// AssignPair answers what the workspace pair operation changes: the named
// defaults, each checked as Assign checks it and always replacing, in one
// change that applies both or neither. Invalid "at least one of
// authentication and signing is required" when it names neither.
func (c Catalog) AssignPair(r PairRequest) (Change, error) {
	var want []hub.CredentialAssignment
	if r.Authentication != nil {
		a, err := c.resolve(r.WorkspaceID, r.Authentication.CredentialID, hub.RoleAuthentication, r.Authentication.Host, r.Authentication.Policy)
		if err != nil {
			return Change{}, err
		}
		want = append(want, a)
	}
	if r.Signing != nil {
		a, err := c.resolve(r.WorkspaceID, *r.Signing, hub.RoleSigning, "", r.SigningPolicy)
		if err != nil {
			return Change{}, err
		}
		want = append(want, a)
	}
	if len(want) == 0 {
		return Change{}, errPairEmpty
	}
	return c.apply(r.WorkspaceID, want, true)
}

// resolve checks one wanted assignment: its shape, then its credential.
func (c Catalog) resolve(workspaceID, credentialID string, role hub.CredentialRole, host string, policy hub.UsePolicy) (hub.CredentialAssignment, error) {
	a, err := shape(workspaceID, credentialID, role, host, policy)
	if err != nil {
		return hub.CredentialAssignment{}, err
	}
	return a, c.admit(a)
}

// shape checks what an assignment request says (Invalid) and answers the
// assignment with its host normalized and its policy as given ("" is
// decided by apply).
func shape(workspaceID, credentialID string, role hub.CredentialRole, host string, policy hub.UsePolicy) (hub.CredentialAssignment, error) {
	if err := CheckID(credentialID); err != nil {
		return hub.CredentialAssignment{}, err
	}
	if policy != "" && !slices.Contains(hub.UsePolicies(), policy) {
		return hub.CredentialAssignment{}, errPolicy
	}
	host, err := roleHost(role, host)
	if err != nil {
		return hub.CredentialAssignment{}, err
	}
	return hub.CredentialAssignment{WorkspaceID: workspaceID, CredentialID: credentialID, Role: role, Host: host, Policy: policy}, nil
}

// admit checks a well-formed assignment against its credential: that it
// exists (NotFound), fits the role and host (Invalid) and is enabled
// (Conflict).
func (c Catalog) admit(a hub.CredentialAssignment) error {
	cred, ok := c.Credential(a.CredentialID)
	if !ok {
		return hub.Errorf(hub.NotFound, "unknown credential: %s", a.CredentialID)
	}
	if err := fits(cred, a.Role, a.Host); err != nil {
		return err
	}
	if !cred.Enabled {
		return hub.Errorf(hub.Conflict, "credential is disabled: %s", a.CredentialID)
	}
	return nil
}

// roleHost checks a role and the host that goes with it, and answers the
// host normalized ("" for signing).
func roleHost(role hub.CredentialRole, host string) (string, error) {
	switch role {
	case hub.RoleAuthentication:
		if host == "" {
			return "", errHostRequired
		}
		return NormalizeHost(host)
	case hub.RoleSigning:
		if host != "" {
			return "", errHostNotAllowed
		}
		return "", nil
	}
	return "", errRole
}

// fits checks that cred can take role (for host, normalized).
func fits(cred hub.Credential, role hub.CredentialRole, host string) error {
	switch {
	case role == hub.RoleSigning && !CanSign(cred):
		return errCannotSign
	case role == hub.RoleAuthentication && !CanAuthenticate(cred):
		return errCannotAuth
	case role == hub.RoleAuthentication && cred.Type == hub.CredentialToken && cred.Host != host:
		return hub.Errorf(hub.Invalid, "credential host does not match assignment host: %s", host)
	}
	return nil
}

// apply makes the wanted assignments of one workspace, each taking its
// place (a workspace's default for a host, or its signing default) unless
// another credential holds it and replace is false, and checks the
// workspace's CLI tokens afterwards. A wanted policy of "" keeps the
// policy of the same credential in the same place, else is
// hub.PolicyAlways; the same credential with another policy is put anew,
// which replace need not allow.
func (c Catalog) apply(workspaceID string, want []hub.CredentialAssignment, replace bool) (Change, error) {
	var ch Change
	after := slices.Clone(c.Assignments)
	for _, w := range want {
		i := slices.IndexFunc(after, func(a hub.CredentialAssignment) bool { return samePlace(a, w) })
		same := i >= 0 && after[i].CredentialID == w.CredentialID
		switch {
		case w.Policy == "" && same:
			w.Policy = after[i].Policy
		case w.Policy == "":
			w.Policy = hub.PolicyAlways
		}
		switch {
		case same && after[i].Policy == w.Policy:
			ch.InEffect = append(ch.InEffect, after[i])
			continue
		case i >= 0 && !same && !replace:
			return Change{}, hub.Errorf(hub.Conflict, "credential assignment conflicts with existing default: %s", after[i].CredentialID)
		case i >= 0:
			ch.Removed = append(ch.Removed, after[i])
			after = slices.Delete(after, i, i+1)
		}
		after = append(after, w)
		ch.Put = append(ch.Put, w)
		ch.InEffect = append(ch.InEffect, w)
	}
	if err := c.oneTokenPerCLI(workspaceID, after); err != nil {
		return Change{}, err
	}
	SortAssignments(after)
	ch.After = after
	return ch, nil
}

// oneTokenPerCLI refuses a workspace whose authentication defaults hold
// two tokens for the GitHub CLI, or two for the GitLab CLI: a CLI reads its
// token from one variable for every host (research §6).
func (c Catalog) oneTokenPerCLI(workspaceID string, as []hub.CredentialAssignment) error {
	var gh, glab string
	for _, a := range as {
		if a.WorkspaceID != workspaceID || a.Role != hub.RoleAuthentication {
			continue
		}
		cred, _ := c.Credential(a.CredentialID)
		if Has(cred, hub.CapGitHubCLI) {
			if gh != "" && gh != cred.ID {
				return errOneGitHubCLI
			}
			gh = cred.ID
		}
		if Has(cred, hub.CapGitLabCLI) {
			if glab != "" && glab != cred.ID {
				return errOneGitLabCLI
			}
			glab = cred.ID
		}
	}
	return nil
}

// samePlace reports whether a and b are the same default: one workspace's
// authentication default for one host, or its signing default.
func samePlace(a, b hub.CredentialAssignment) bool {
	return a.WorkspaceID == b.WorkspaceID && a.Role == b.Role && a.Host == b.Host
}

// SortAssignments orders assignments as the store does: by workspace,
// role and host (and credential, which a well-formed set never needs).
func SortAssignments(as []hub.CredentialAssignment) {
	slices.SortFunc(as, func(a, b hub.CredentialAssignment) int {
		return cmp.Or(cmp.Compare(a.WorkspaceID, b.WorkspaceID), cmp.Compare(a.Role, b.Role),
			cmp.Compare(a.Host, b.Host), cmp.Compare(a.CredentialID, b.CredentialID))
	})
}

// Credential returns the credential id of the catalog.
func (c Catalog) Credential(id string) (hub.Credential, bool) {
	i := slices.IndexFunc(c.Credentials, func(cr hub.Credential) bool { return cr.ID == id })
	if i < 0 {
		return hub.Credential{}, false
	}
	return c.Credentials[i], true
}

// AssignmentsOf returns every assignment of credential id, in the store's
// order: the record's `assignments`.
func (c Catalog) AssignmentsOf(id string) []hub.CredentialAssignment {
	var out []hub.CredentialAssignment
	for _, a := range c.Assignments {
		if a.CredentialID == id {
			out = append(out, a)
		}
	}
	SortAssignments(out)
	return out
}

// WorkspaceAssignments returns every assignment of workspace id, in the
// store's order.
func (c Catalog) WorkspaceAssignments(id string) []hub.CredentialAssignment {
	var out []hub.CredentialAssignment
	for _, a := range c.Assignments {
		if a.WorkspaceID == id {
			out = append(out, a)
		}
	}
	SortAssignments(out)
	return out
}

// Names answers a workspace's credentialAssignments: the names of its
// authentication and of its signing credentials, each list deduplicated,
// in the store's order of the assignments; empty, never nil. A name says
// nothing of whether the credential is enabled or unlocked.
func (c Catalog) Names(workspaceID string) (authentication, signing []string) {
	authentication, signing = []string{}, []string{}
	for _, a := range c.WorkspaceAssignments(workspaceID) {
		cred, ok := c.Credential(a.CredentialID)
		if !ok {
			continue
		}
		list := &authentication
		if a.Role == hub.RoleSigning {
			list = &signing
		}
		if !slices.Contains(*list, cred.Name) {
			*list = append(*list, cred.Name)
		}
	}
	return authentication, signing
}
