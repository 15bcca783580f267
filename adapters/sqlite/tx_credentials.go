package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the credentials, their assignments and the tools'
// overrides (migration 0004). Every value of a closed set is checked on
// the way in, so a write the store could not read back is refused, and
// again on the way out, so a row changed behind the Hub's back is an
// error rather than a record the rules never let through.

// unstorable refuses a record the store could not read back faithfully,
// for why: the rules (hub/credential) let none through, so one reaching
// here is a bug, reported as Internal like a failure of the store.
func unstorable(why error) error {
	return hub.Wrap(hub.Internal, why, "the Hub's database cannot store this credential record")
}

// capabilitySep joins capabilities in their column; no capability holds it.
const capabilitySep = ","

// encodeCapabilities joins cs in order, refusing an unknown or repeated
// capability.
func encodeCapabilities(cs []hub.Capability) (string, error) {
	if err := hub.CheckCapabilityList(cs); err != nil {
		return "", err
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return strings.Join(parts, capabilitySep), nil
}

// decodeCapabilities reads what encodeCapabilities wrote, and nothing else.
func decodeCapabilities(s string) ([]hub.Capability, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, capabilitySep)
	cs := make([]hub.Capability, len(parts))
	for i, p := range parts {
		cs[i] = hub.Capability(p)
	}
	return cs, hub.CheckCapabilityList(cs)
}

const credentialCols = `id, name, type, capabilities, enabled, created_at, public_key, fingerprint, host, username, protected`

func scanCredential(sc scanner) (hub.Credential, error) {
	var c hub.Credential
	var typ, caps string
	var created int64
	if err := sc.Scan(&c.ID, &c.Name, &typ, &caps, &c.Enabled, &created, &c.PublicKey, &c.Fingerprint,
		&c.Host, &c.Username, &c.Protected); err != nil {
		return hub.Credential{}, err
	}
	c.Type, c.CreatedAt = hub.CredentialType(typ), fromNanos(created)
	if err := hub.CheckCredentialType(c.Type); err != nil {
		return hub.Credential{}, fmt.Errorf("credential %q: %w", c.ID, err)
	}
	var err error
	if c.Capabilities, err = decodeCapabilities(caps); err != nil {
		return hub.Credential{}, fmt.Errorf("credential %q: %w", c.ID, err)
	}
	return c, nil
}

func (t *tx) Credentials() ([]hub.Credential, error) {
	return queryAll(t, scanCredential, `SELECT `+credentialCols+` FROM credentials ORDER BY seq`)
}

func credentialNotFound(id string) error {
	return hub.Errorf(hub.NotFound, "credential %q not found", id)
}

func (t *tx) Credential(id string) (hub.Credential, error) {
	c, err := scanCredential(t.queryRow(`SELECT `+credentialCols+` FROM credentials WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return hub.Credential{}, credentialNotFound(id)
	}
	if err != nil {
		return hub.Credential{}, internal(err)
	}
	return c, nil
}

func (t *tx) CredentialSecret(id string) ([]byte, error) {
	var sealed []byte // scanning into *[]byte copies: the caller owns it
	err := t.queryRow(`SELECT sealed FROM credentials WHERE id = ?`, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, credentialNotFound(id)
	}
	if err != nil {
		return nil, internal(err)
	}
	return sealed, nil
}

func (t *tx) CreateCredential(c hub.Credential, sealed []byte) error {
	if err := hub.CheckCredentialType(c.Type); err != nil {
		return unstorable(fmt.Errorf("credential %q: %w", c.ID, err))
	}
	caps, err := encodeCapabilities(c.Capabilities)
	if err != nil {
		return unstorable(fmt.Errorf("credential %q: %w", c.ID, err))
	}
	// Both conflicts are checked first, to say which it is (the write
	// lock is held, so nothing changes in between); the UNIQUE
	// constraints stay as the last word.
	taken, err := t.exists(`SELECT EXISTS (SELECT 1 FROM credentials WHERE id = ?)`, c.ID)
	if err != nil {
		return err
	}
	if taken {
		return hub.Errorf(hub.Conflict, "credential %q already exists", c.ID)
	}
	if c.Fingerprint != "" {
		held, err := t.exists(`SELECT EXISTS (SELECT 1 FROM credentials WHERE fingerprint = ?)`, c.Fingerprint)
		if err != nil {
			return err
		}
		if held {
			return hub.Errorf(hub.Conflict, "another credential has the fingerprint %s", c.Fingerprint)
		}
	}
	if sealed == nil {
		sealed = []byte{} // the column is NOT NULL; a nil secret is an empty one
	}
	_, err = t.exec(`INSERT INTO credentials (`+credentialCols+`, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, string(c.Type), caps, c.Enabled, nanos(c.CreatedAt), c.PublicKey, c.Fingerprint,
		c.Host, c.Username, c.Protected, sealed)
	if isConstraint(err, "UNIQUE") {
		return hub.Errorf(hub.Conflict, "credential id or fingerprint already in use")
	}
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) UpdateCredential(c hub.Credential) error {
	return t.expectOne(credentialNotFound(c.ID),
		`UPDATE credentials SET name = ?, enabled = ? WHERE id = ?`, c.Name, c.Enabled, c.ID)
}

// DeleteCredential relies on ON DELETE CASCADE for the assignments; the
// secret is a column of the row itself.
func (t *tx) DeleteCredential(id string) error {
	return t.expectOne(credentialNotFound(id), `DELETE FROM credentials WHERE id = ?`, id)
}

func scanAssignment(sc scanner) (hub.CredentialAssignment, error) {
	var a hub.CredentialAssignment
	var role, policy string
	if err := sc.Scan(&a.WorkspaceID, &role, &a.Host, &a.CredentialID, &policy); err != nil {
		return hub.CredentialAssignment{}, err
	}
	a.Role, a.Policy = hub.CredentialRole(role), hub.UsePolicy(policy)
	if err := hub.CheckAssignmentRecord(a); err != nil {
		return hub.CredentialAssignment{}, fmt.Errorf("assignment of workspace %q: %w", a.WorkspaceID, err)
	}
	return a, nil
}

func (t *tx) CredentialAssignments() ([]hub.CredentialAssignment, error) {
	// The primary key's index gives this order; SQLite compares TEXT
	// byte by byte (BINARY), as the contract says.
	return queryAll(t, scanAssignment, `SELECT workspace_id, role, host, credential_id, use_policy
		FROM credential_assignments ORDER BY workspace_id, role, host`)
}

func (t *tx) PutCredentialAssignment(a hub.CredentialAssignment) error {
	if err := hub.CheckAssignmentRecord(a); err != nil {
		return unstorable(fmt.Errorf("assignment of workspace %q: %w", a.WorkspaceID, err))
	}
	// The foreign keys would refuse the write anyway, but NotFound must
	// say what is missing.
	ok, err := t.exists(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`, a.WorkspaceID)
	if err != nil {
		return err
	}
	if !ok {
		return hub.Errorf(hub.NotFound, "workspace %q not found", a.WorkspaceID)
	}
	if ok, err = t.exists(`SELECT EXISTS (SELECT 1 FROM credentials WHERE id = ?)`, a.CredentialID); err != nil {
		return err
	}
	if !ok {
		return credentialNotFound(a.CredentialID)
	}
	_, err = t.exec(`INSERT INTO credential_assignments (workspace_id, role, host, credential_id, use_policy) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, role, host) DO UPDATE SET credential_id = excluded.credential_id, use_policy = excluded.use_policy`,
		a.WorkspaceID, string(a.Role), a.Host, a.CredentialID, string(a.Policy))
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) DeleteCredentialAssignment(a hub.CredentialAssignment) (bool, error) {
	n, err := t.count(`DELETE FROM credential_assignments
		WHERE workspace_id = ? AND role = ? AND host = ? AND credential_id = ?`,
		a.WorkspaceID, string(a.Role), a.Host, a.CredentialID)
	return n > 0, err
}

func (t *tx) CredentialToolOverrides() (map[hub.CredentialToolName]string, error) {
	type override struct {
		tool hub.CredentialToolName
		path string
	}
	rows, err := queryAll(t, func(sc scanner) (override, error) {
		var o override
		var tool string
		if err := sc.Scan(&tool, &o.path); err != nil {
			return override{}, err
		}
		o.tool = hub.CredentialToolName(tool)
		return o, hub.CheckToolName(o.tool)
	}, `SELECT tool, path FROM credential_tool_overrides`)
	if err != nil {
		return nil, err
	}
	m := make(map[hub.CredentialToolName]string, len(rows))
	for _, o := range rows {
		m[o.tool] = o.path
	}
	return m, nil
}

func (t *tx) PutCredentialToolOverride(tool hub.CredentialToolName, path string) error {
	if err := hub.CheckToolName(tool); err != nil {
		return unstorable(err)
	}
	q, args := `INSERT INTO credential_tool_overrides (tool, path) VALUES (?, ?)
		ON CONFLICT (tool) DO UPDATE SET path = excluded.path`, []any{string(tool), path}
	if path == "" {
		q, args = `DELETE FROM credential_tool_overrides WHERE tool = ?`, []any{string(tool)}
	}
	if _, err := t.exec(q, args...); err != nil {
		return internal(err)
	}
	return nil
}
