package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// seedCredentials opens a new database at path and stores in it a
// workspace, an SSH key assigned to it in both roles, a token and a tool
// override, then closes it.
func seedCredentials(t *testing.T, path string) {
	is := is.New(t)
	s, err := sqlite.Open(path)
	is.NoErr(err) // open a new database
	key := hub.Credential{ID: "k1", Name: "key", Type: hub.CredentialSSH,
		Capabilities: []hub.Capability{hub.CapSSHAuthentication, hub.CapSSHSigning}, Enabled: true,
		CreatedAt: time.Unix(1, 0), PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:k1", Protected: true}
	token := hub.Credential{ID: "t1", Name: "token", Type: hub.CredentialToken,
		Capabilities: []hub.Capability{hub.CapHTTPSGit}, Enabled: true, CreatedAt: time.Unix(2, 0), Host: "github.com"}
	login := hub.CredentialAssignment{WorkspaceID: "w1", CredentialID: "k1", Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAlways}
	sign := hub.CredentialAssignment{WorkspaceID: "w1", CredentialID: "k1", Role: hub.RoleSigning, Policy: hub.PolicyAskOnce}
	is.NoErr(s.Update(context.Background(), func(tx hub.Tx) error { // the update succeeds
		is.NoErr(tx.CreateWorkspace(hub.Workspace{ID: "w1", Path: "/srv/w1", Backend: "local"})) // a workspace
		is.NoErr(tx.CreateCredential(key, []byte("sealed k1")))                                  // a key
		is.NoErr(tx.CreateCredential(token, []byte("sealed t1")))                                // a token
		is.NoErr(tx.PutCredentialAssignment(login))                                              // the key assigned to log in
		is.NoErr(tx.PutCredentialAssignment(sign))                                               // and to sign
		is.NoErr(tx.PutCredentialToolOverride(hub.ToolGit, "/opt/git/bin/git"))                  // a tool override
		return nil
	}))
	is.NoErr(s.Close()) // close it
}

// rawExec runs statements on the database at path behind the adapter's
// back, with CHECK constraints off, as a hand or a bug elsewhere could.
func rawExec(t *testing.T, path, q string) {
	is := is.New(t)
	db, err := sql.Open("sqlite", path+"?_pragma=ignore_check_constraints(1)")
	is.NoErr(err) // open behind the adapter's back
	defer db.Close()
	_, err = db.Exec(q)
	is.NoErr(err) // corrupt the row
}

// A row the adapter did not write as it writes them is an Internal error
// when read, never a record the rules would not have let through: an
// unknown type, capability, role or tool, a repeated or empty capability,
// a signing assignment with a host.
func TestCorruptCredentialRowsAreInternalErrors(t *testing.T) {
	credentials := func(tx hub.Tx) error { _, err := tx.Credentials(); return err }
	byID := func(tx hub.Tx) error { _, err := tx.Credential("k1"); return err }
	assignments := func(tx hub.Tx) error { _, err := tx.CredentialAssignments(); return err }
	overrides := func(tx hub.Tx) error { _, err := tx.CredentialToolOverrides(); return err }
	for _, c := range []struct {
		name    string
		corrupt string
		reads   []func(hub.Tx) error
	}{
		{"UnknownType", `UPDATE credentials SET type = 'x509' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"EmptyType", `UPDATE credentials SET type = '' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"UnknownCapability", `UPDATE credentials SET capabilities = 'ssh-signing,smtp' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"RepeatedCapability", `UPDATE credentials SET capabilities = 'ssh-signing,ssh-signing' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"EmptyCapability", `UPDATE credentials SET capabilities = 'ssh-signing,' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"PaddedCapability", `UPDATE credentials SET capabilities = ' ssh-signing' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"OtherSeparator", `UPDATE credentials SET capabilities = 'ssh-authentication;ssh-signing' WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"NotABoolean", `UPDATE credentials SET enabled = 2 WHERE id = 'k1'`, []func(hub.Tx) error{credentials, byID}},
		{"UnknownRole", `UPDATE credential_assignments SET role = 'owner' WHERE role = 'signing'`, []func(hub.Tx) error{assignments}},
		{"SigningWithAHost", `UPDATE credential_assignments SET host = 'github.com' WHERE role = 'signing'`, []func(hub.Tx) error{assignments}},
		{"AuthenticationWithoutAHost", `UPDATE credential_assignments SET host = '' WHERE role = 'authentication'`, []func(hub.Tx) error{assignments}},
		{"UnknownTool", `INSERT INTO credential_tool_overrides (tool, path) VALUES ('scp', '/usr/bin/scp')`, []func(hub.Tx) error{overrides}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "wharf.db")
			seedCredentials(t, path)
			rawExec(t, path, c.corrupt)
			s, err := sqlite.Open(path)
			is.NoErr(err) // reopen
			defer s.Close()
			for _, read := range c.reads {
				err := s.View(context.Background(), read)
				is.True(err != nil)                     // the corrupt row is refused (KindOf(nil) is Internal too)
				is.Equal(hub.KindOf(err), hub.Internal) // as a failure of the store
			}
			is.NoErr(s.View(context.Background(), func(tx hub.Tx) error { // the view succeeds
				_, err := tx.Credential("t1")
				is.NoErr(err) // a sound row still reads
				_, err = tx.CredentialSecret("k1")
				is.NoErr(err) // and so does a secret, which the corruption did not touch
				return nil
			}))
		})
	}
}

// The schema keeps the invariants the adapter checks before writing, for
// whatever writes past it: no two keys share a fingerprint (tokens have
// none), and an assignment's place is a signing key or an
// authentication default for one host.
func TestTheSchemaKeepsCredentialInvariants(t *testing.T) {
	const cols = `(id, name, type, capabilities, enabled, created_at, public_key, fingerprint, host, username, protected, sealed)`
	for _, c := range []struct {
		name, q string
		ok      bool
	}{
		{"ASecondKeyWithTheSameFingerprint", `INSERT INTO credentials ` + cols + ` VALUES ('k2', 'k', 'ssh', 'ssh-signing', 1, 0, '', 'SHA256:k1', '', '', 1, x'00')`, false},
		{"ASecondCredentialWithNoFingerprint", `INSERT INTO credentials ` + cols + ` VALUES ('t2', 't', 'token', 'https-git', 1, 0, '', '', 'gitlab.com', '', 0, x'00')`, true},
		{"ASecondCredentialWithTheSameID", `INSERT INTO credentials ` + cols + ` VALUES ('t1', 't', 'token', 'https-git', 1, 0, '', '', 'gitlab.com', '', 0, x'00')`, false},
		{"ACredentialWithoutASecret", `INSERT INTO credentials ` + cols + ` VALUES ('t3', 't', 'token', 'https-git', 1, 0, '', '', 'gitlab.com', '', 0, NULL)`, false},
		{"ASecondSigningKey", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'signing', '', 't1')`, false},
		{"ASecondDefaultForAHost", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'authentication', 'github.com', 't1')`, false},
		{"ASigningKeyWithAHost", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'signing', 'gitlab.com', 't1')`, false},
		{"AnAuthenticationDefaultWithoutAHost", `DELETE FROM credential_assignments WHERE role = 'authentication';
			INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'authentication', '', 't1')`, false},
		{"AnUnknownRole", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'owner', 'gitlab.com', 't1')`, false},
		{"AnAssignmentOfAnUnknownWorkspace", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w9', 'authentication', 'gitlab.com', 't1')`, false},
		{"AnAssignmentOfAnUnknownCredential", `INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES ('w1', 'authentication', 'gitlab.com', 'c9')`, false},
		{"AnEmptyOverride", `INSERT INTO credential_tool_overrides (tool, path) VALUES ('ssh', '')`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "wharf.db")
			seedCredentials(t, path)
			db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
			is.NoErr(err) // open behind the adapter's back
			defer db.Close()
			_, err = db.Exec(c.q)
			is.Equal(err == nil, c.ok) // the schema accepts or refuses the write
		})
	}
}
