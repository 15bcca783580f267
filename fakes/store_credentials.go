package fakes

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the fake store's credentials, their assignments and the
// tools' overrides. It refuses what the SQLite adapter cannot store (a
// value of a closed set the records do not name) with the same Internal
// error, so a caller tested against the fake meets the refusal too.

// storedCredential is one credential as the fake keeps it. Neither its
// capabilities nor its secret are ever changed in place: they are copied
// on the way in and on the way out.
type storedCredential struct {
	c      hub.Credential
	sealed []byte
}

// assignmentPlace is the place an assignment holds in its workspace: the
// default for one host, or the signing key (host "").
type assignmentPlace struct {
	workspace string
	role      hub.CredentialRole
	host      string
}

// assignmentHolder is the credential holding a place, with its policy.
type assignmentHolder struct {
	credential string
	policy     hub.UsePolicy
}

func cloneCredential(c hub.Credential) hub.Credential {
	c.Capabilities = slices.Clone(c.Capabilities)
	return c
}

// unstorable refuses a record the SQLite adapter could not read back, as
// it does.
func unstorable(why error) error {
	return hub.Wrap(hub.Internal, why, "the Hub's database cannot store this credential record")
}

func checkCredential(c hub.Credential) error {
	if err := hub.CheckCredentialType(c.Type); err != nil {
		return fmt.Errorf("credential %q: %w", c.ID, err)
	}
	if err := hub.CheckCapabilityList(c.Capabilities); err != nil {
		return fmt.Errorf("credential %q: %w", c.ID, err)
	}
	return nil
}

func credentialNotFound(id string) error {
	return hub.Errorf(hub.NotFound, "credential %q not found", id)
}

// credentialIndex returns the position of credential id, or -1.
func (t *tx) credentialIndex(id string) int {
	return slices.IndexFunc(t.st.credentials, func(s storedCredential) bool { return s.c.ID == id })
}

func (t *tx) Credentials() ([]hub.Credential, error) {
	cs := make([]hub.Credential, len(t.st.credentials))
	for i, s := range t.st.credentials {
		cs[i] = cloneCredential(s.c)
	}
	return cs, nil
}

func (t *tx) Credential(id string) (hub.Credential, error) {
	i := t.credentialIndex(id)
	if i < 0 {
		return hub.Credential{}, credentialNotFound(id)
	}
	return cloneCredential(t.st.credentials[i].c), nil
}

func (t *tx) CredentialSecret(id string) ([]byte, error) {
	i := t.credentialIndex(id)
	if i < 0 {
		return nil, credentialNotFound(id)
	}
	return bytes.Clone(t.st.credentials[i].sealed), nil
}

func (t *tx) CreateCredential(c hub.Credential, sealed []byte) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := checkCredential(c); err != nil {
		return unstorable(err)
	}
	if t.credentialIndex(c.ID) >= 0 {
		return hub.Errorf(hub.Conflict, "credential %q already exists", c.ID)
	}
	if c.Fingerprint != "" && slices.ContainsFunc(t.st.credentials, func(s storedCredential) bool {
		return s.c.Fingerprint == c.Fingerprint
	}) {
		return hub.Errorf(hub.Conflict, "another credential has the fingerprint %s", c.Fingerprint)
	}
	t.st.credentials = append(t.st.credentials, storedCredential{c: cloneCredential(c), sealed: bytes.Clone(sealed)})
	return nil
}

func (t *tx) UpdateCredential(c hub.Credential) error {
	if err := t.write(); err != nil {
		return err
	}
	i := t.credentialIndex(c.ID)
	if i < 0 {
		return credentialNotFound(c.ID)
	}
	// The slice was cloned for this transaction, so assigning an element
	// does not reach the committed state; the capabilities it shares
	// with it are not touched.
	cur := &t.st.credentials[i].c
	cur.Name, cur.Enabled = c.Name, c.Enabled
	return nil
}

func (t *tx) DeleteCredential(id string) error {
	if err := t.write(); err != nil {
		return err
	}
	i := t.credentialIndex(id)
	if i < 0 {
		return credentialNotFound(id)
	}
	t.st.credentials = slices.Delete(t.st.credentials, i, i+1)
	maps.DeleteFunc(t.st.assignments, func(_ assignmentPlace, h assignmentHolder) bool { return h.credential == id })
	return nil
}

func (t *tx) CredentialAssignments() ([]hub.CredentialAssignment, error) {
	as := make([]hub.CredentialAssignment, 0, len(t.st.assignments))
	for p, h := range t.st.assignments {
		as = append(as, hub.CredentialAssignment{WorkspaceID: p.workspace, CredentialID: h.credential, Role: p.role, Host: p.host, Policy: h.policy})
	}
	slices.SortFunc(as, func(a, b hub.CredentialAssignment) int {
		return cmp.Or(cmp.Compare(a.WorkspaceID, b.WorkspaceID), cmp.Compare(a.Role, b.Role), cmp.Compare(a.Host, b.Host))
	})
	return as, nil
}

func (t *tx) PutCredentialAssignment(a hub.CredentialAssignment) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := hub.CheckAssignmentRecord(a); err != nil {
		return unstorable(fmt.Errorf("assignment of workspace %q: %w", a.WorkspaceID, err))
	}
	if t.workspaceIndex(a.WorkspaceID) < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", a.WorkspaceID)
	}
	if t.credentialIndex(a.CredentialID) < 0 {
		return credentialNotFound(a.CredentialID)
	}
	t.st.assignments[assignmentPlace{a.WorkspaceID, a.Role, a.Host}] = assignmentHolder{a.CredentialID, a.Policy}
	return nil
}

func (t *tx) DeleteCredentialAssignment(a hub.CredentialAssignment) (bool, error) {
	if err := t.write(); err != nil {
		return false, err
	}
	p := assignmentPlace{a.WorkspaceID, a.Role, a.Host}
	if h, ok := t.st.assignments[p]; !ok || h.credential != a.CredentialID {
		return false, nil
	}
	delete(t.st.assignments, p)
	return true, nil
}

// forgetAssignments deletes every assignment of the workspace: the fake's
// ON DELETE CASCADE.
func (t *tx) forgetAssignments(workspaceID string) {
	maps.DeleteFunc(t.st.assignments, func(p assignmentPlace, _ assignmentHolder) bool { return p.workspace == workspaceID })
}

func (t *tx) CredentialToolOverrides() (map[hub.CredentialToolName]string, error) {
	return maps.Clone(t.st.toolOverrides), nil
}

func (t *tx) PutCredentialToolOverride(tool hub.CredentialToolName, path string) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := hub.CheckToolName(tool); err != nil {
		return unstorable(err)
	}
	if path == "" {
		delete(t.st.toolOverrides, tool)
	} else {
		t.st.toolOverrides[tool] = path
	}
	return nil
}
