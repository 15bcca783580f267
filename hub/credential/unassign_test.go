package credential_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// TestUnassignmentsRemoveWhatTheyName copies research §8.2's three
// unassign selections row by row: one authentication host, the signing
// default, or every role of the credential in the workspace.
func TestUnassignmentsRemoveWhatTheyName(t *testing.T) {
	type want struct {
		removed assignments
		refusal string
	}
	for _, tc := range []struct {
		row string
		req credential.UnassignRequest
		want
	}{
		{"one authentication host",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "github.com"},
			want{removed: assignments{auth("ws1", "tok-git", "github.com")}}},
		{"one authentication host, normalized",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "https://GitHub.COM./"},
			want{removed: assignments{auth("ws1", "tok-git", "github.com")}}},
		{"one host of a key assigned to two",
			credential.UnassignRequest{WorkspaceID: "ws3", CredentialID: "ssh-both", Role: hub.RoleAuthentication, Host: "gitlab.com"},
			want{removed: assignments{auth("ws3", "ssh-both", "gitlab.com")}}},
		{"the signing default",
			credential.UnassignRequest{WorkspaceID: "ws3", CredentialID: "ssh-both", Role: hub.RoleSigning},
			want{removed: assignments{signing("ws3", "ssh-both")}}},
		{"every role of the credential in the workspace",
			credential.UnassignRequest{WorkspaceID: "ws3", CredentialID: "ssh-both"},
			want{removed: assignments{auth("ws3", "ssh-both", "github.com"), auth("ws3", "ssh-both", "gitlab.com"), signing("ws3", "ssh-both")}}},
		{"a host the credential does not hold",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "gitlab.com"},
			want{}},
		{"a default another credential holds",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "ssh-both", Role: hub.RoleSigning},
			want{}},
		{"an unknown credential removes nothing, no 404",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "nope"},
			want{}},
		{"an unknown workspace removes nothing, no 404",
			credential.UnassignRequest{WorkspaceID: "ws9", CredentialID: "tok-git"},
			want{}},
		{"a host without a role",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Host: "github.com"},
			want{refusal: "host is allowed only with role authentication"}},
		{"a host with signing",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "ssh-sign", Role: hub.RoleSigning, Host: "github.com"},
			want{refusal: "host is allowed only with role authentication"}},
		{"authentication without a host",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication},
			want{refusal: "host is required for role authentication"}},
		{"an unknown role",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: "all"},
			want{refusal: "role must be authentication or signing"}},
		{"an invalid host",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "github.com*"},
			want{refusal: "host must be a literal DNS name or IP address, not a pattern"}},
		{"a malformed credential id",
			credential.UnassignRequest{WorkspaceID: "ws1", CredentialID: ""},
			want{refusal: "credential id is invalid"}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c := fixture()
			ch, err := c.Unassign(tc.req)
			if tc.refusal != "" {
				failsWith(is, err, hub.Invalid, tc.refusal)
				return
			}
			is.NoErr(err)                                // allowed
			is.Equal(ch.Empty(), len(tc.removed) == 0)   // removed: false when nothing matched
			checkChange(is, c, ch, nil, tc.removed, nil) // exactly those go
		})
	}
}

// TestARunningWorkspaceLosesAssignmentsOnlyWithStop copies the contract's
// workspace-session row for hubUnassignCredential.
func TestARunningWorkspaceLosesAssignmentsOnlyWithStop(t *testing.T) {
	some := credential.Change{Removed: assignments{signing("ws1", "ssh-sign")}}
	for _, tc := range []struct {
		row                 string
		ch                  credential.Change
		running, stop, want bool
	}{
		{"running, without stop: true", some, true, false, false},
		{"running, with stop: true (stopped and removed in one lifecycle operation)", some, true, true, true},
		{"stopped", some, false, false, true},
		{"running, nothing to remove", credential.Change{}, true, false, true},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			err := credential.StopGuard(tc.ch, tc.running, tc.stop)
			if tc.want {
				is.NoErr(err) // may go ahead
				return
			}
			failsWith(is, err, hub.Conflict, "credential assignment removal conflicts with the running workspace session; stop it first or pass stop: true")
		})
	}
}

// TestDeletingACredentialNeedsConfirmationAndItsAssignmentsGone copies
// research §8.3 row by row.
func TestDeletingACredentialNeedsConfirmationAndItsAssignmentsGone(t *testing.T) {
	for _, tc := range []struct {
		row               string
		id                string
		confirm, unassign bool
		removed           assignments
		kind              hub.Kind
		refusal           string
	}{
		{"without confirmation", "pgp", false, true, nil, hub.Invalid, "credential deletion requires confirmation"},
		{"an unassigned credential", "pgp", true, false, nil, 0, ""},
		{"an assigned credential without unassign", "ssh-both", true, false, nil, hub.Conflict, "credential is assigned to 3 workspace default(s)"},
		{"an assigned credential with unassign", "ssh-both", true, true,
			assignments{auth("ws3", "ssh-both", "github.com"), auth("ws3", "ssh-both", "gitlab.com"), signing("ws3", "ssh-both")}, 0, ""},
		{"an unknown credential", "nope", true, true, nil, hub.NotFound, "unknown credential: nope"},
		{"a malformed id", "a b", true, true, nil, hub.Invalid, "credential id is invalid"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c := fixture()
			ch, err := c.Delete(tc.id, tc.confirm, tc.unassign)
			if tc.refusal != "" {
				failsWith(is, err, tc.kind, tc.refusal)
				return
			}
			is.NoErr(err)                                // deleted
			checkChange(is, c, ch, nil, tc.removed, nil) // with its assignments
		})
	}
}

// TestOnboardingSelectionsConflictAsTheContractSays copies research §8.2's
// onboarding rows: a malformed selection is invalid, every other refusal
// is the contract's credential selection conflict.
func TestOnboardingSelectionsConflictAsTheContractSays(t *testing.T) {
	type sels = []hub.AuthenticationSelection
	for _, tc := range []struct {
		row     string
		auth    sels
		signing string
		put     assignments
		kind    hub.Kind
		refusal string
	}{
		{"none", nil, "", nil, 0, ""},
		{"two hosts and a signing key", sels{{CredentialID: "tok-git", Host: "GitHub.com"}, {CredentialID: "ssh-auth", Host: "gitlab.com"}}, "pgp",
			assignments{auth("ws9", "tok-git", "github.com"), auth("ws9", "ssh-auth", "gitlab.com"), signing("ws9", "pgp")}, 0, ""},
		{"one host twice, once unnormalized", sels{{CredentialID: "ssh-auth", Host: "github.com"}, {CredentialID: "ssh-both", Host: "GitHub.com."}}, "",
			nil, hub.Conflict, "conflicting authentication defaults for one host"},
		{"an unknown credential", sels{{CredentialID: "nope", Host: "github.com"}}, "", nil, hub.Conflict, "unknown credential: nope"},
		{"an unknown signing credential", nil, "nope", nil, hub.Conflict, "unknown credential: nope"},
		{"a disabled credential", nil, "off", nil, hub.Conflict, "credential is disabled: off"},
		{"the wrong capability", nil, "ssh-auth", nil, hub.Conflict, "credential cannot sign: it has neither ssh-signing nor openpgp-signing"},
		{"a token for another host", sels{{CredentialID: "tok-git", Host: "gitlab.com"}}, "", nil, hub.Conflict, "credential host does not match assignment host: gitlab.com"},
		{"two GitLab CLI tokens", sels{{CredentialID: "tok-gl", Host: "gitlab.com"}, {CredentialID: "tok-gl-2", Host: "gitlab.example.com"}}, "",
			nil, hub.Conflict, "a workspace can use the GitLab CLI credential for only one provider host"},
		{"an invalid host", sels{{CredentialID: "tok-git", Host: "*.github.com"}}, "", nil, hub.Invalid, "host must be a literal DNS name or IP address, not a pattern"},
		{"a missing credential id", sels{{Host: "github.com"}}, "", nil, hub.Invalid, "authentication credentialId is required"},
		{"a malformed credential id", sels{{CredentialID: "a/b", Host: "github.com"}}, "", nil, hub.Invalid, "credential id is invalid"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c := fixture()
			ch, err := c.Onboard("ws9", tc.auth, tc.signing)
			if tc.refusal != "" {
				failsWith(is, err, tc.kind, tc.refusal)
				return
			}
			is.NoErr(err) // the selections are taken
			checkChange(is, c, ch, tc.put, nil, tc.put)
		})
	}
}
