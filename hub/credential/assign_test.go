package credential_test

import (
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

type assignments = []hub.CredentialAssignment

func key(id, name string, t hub.CredentialType, caps ...hub.Capability) hub.Credential {
	return hub.Credential{ID: id, Name: name, Type: t, Capabilities: caps, Enabled: true}
}

func token(id, host string, caps ...hub.Capability) hub.Credential {
	c := key(id, id, hub.CredentialToken, caps...)
	c.Host = host
	return c
}

func auth(ws, id, host string) hub.CredentialAssignment {
	return hub.CredentialAssignment{WorkspaceID: ws, CredentialID: id, Role: hub.RoleAuthentication, Host: host, Policy: hub.PolicyAlways}
}

func signing(ws, id string) hub.CredentialAssignment {
	return hub.CredentialAssignment{WorkspaceID: ws, CredentialID: id, Role: hub.RoleSigning, Policy: hub.PolicyAlways}
}

// fixture is a catalog with a key or token of every kind and three
// workspaces: ws1 holds a Git token and a CLI token for two GitHub hosts
// and an SSH signing key, ws2 a GitLab CLI token, ws3 one SSH key in
// every role it can take.
func fixture() credential.Catalog {
	off := key("off", "Old key", hub.CredentialSSH, hub.CapSSHAuthentication, hub.CapSSHSigning)
	off.Enabled = false
	return credential.Catalog{
		Credentials: []hub.Credential{
			key("ssh-both", "Both", hub.CredentialSSH, hub.CapSSHAuthentication, hub.CapSSHSigning),
			key("ssh-auth", "Login", hub.CredentialSSH, hub.CapSSHAuthentication),
			key("ssh-sign", "Signer", hub.CredentialSSH, hub.CapSSHSigning),
			key("pgp", "PGP", hub.CredentialOpenPGP, hub.CapOpenPGPSigning),
			token("tok-git", "github.com", hub.CapHTTPSGit),
			token("tok-gh", "github.com", hub.CapHTTPSGit, hub.CapGitHubCLI),
			token("tok-gh-ghe", "ghe.example.com", hub.CapGitHubCLI),
			token("tok-gl", "gitlab.com", hub.CapGitLabCLI),
			token("tok-gl-b", "gitlab.com", hub.CapHTTPSGit, hub.CapGitLabCLI),
			token("tok-gl-2", "gitlab.example.com", hub.CapGitLabCLI),
			token("tok-443", "example.com:443", hub.CapHTTPSGit),
			off,
		},
		Assignments: assignments{
			auth("ws1", "tok-git", "github.com"),
			auth("ws1", "tok-gh-ghe", "ghe.example.com"),
			signing("ws1", "ssh-sign"),
			auth("ws2", "tok-gl", "gitlab.com"),
			auth("ws3", "ssh-both", "github.com"),
			auth("ws3", "ssh-both", "gitlab.com"),
			signing("ws3", "ssh-both"),
		},
	}
}

// checkChange asserts that ch puts put, removes removed, answers inEffect,
// and that After is the catalog less removed plus put, in the store's
// order.
func checkChange(is *is.I, c credential.Catalog, ch credential.Change, put, removed, inEffect assignments) {
	is.Helper()
	is.Equal(ch.Put, put)           // what is recorded
	is.Equal(ch.Removed, removed)   // what goes
	is.Equal(ch.InEffect, inEffect) // what the operation answers
	want := slices.DeleteFunc(slices.Clone(c.Assignments), func(a hub.CredentialAssignment) bool {
		return slices.Contains(removed, a)
	})
	want = append(want, put...)
	credential.SortAssignments(want)
	is.Equal(ch.After, want) // the catalog after it, in the store's order
}

// failsWith asserts err is kind k with message msg.
func failsWith(is *is.I, err error, k hub.Kind, msg string) {
	is.Helper()
	is.Equal(hub.KindOf(err), k)      // the refusal's kind
	is.Equal(hub.MessageOf(err), msg) // and message
}

// TestAssignmentsFollowTheEarlierSystemsRules copies research §8.1 (and
// §6's one token per CLI) row by row.
func TestAssignmentsFollowTheEarlierSystemsRules(t *testing.T) {
	const (
		cannotSign = "credential cannot sign: it has neither ssh-signing nor openpgp-signing"
		cannotAuth = "credential cannot authenticate: it has none of ssh-authentication, https-git, github-cli and gitlab-cli"
	)
	type want struct {
		put, removed, inEffect assignments
		kind                   hub.Kind
		refusal                string
	}
	for _, tc := range []struct {
		row string
		req credential.AssignRequest
		want
	}{
		{"signing needs ssh-signing or openpgp-signing: a login key cannot sign",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleSigning},
			want{kind: hub.Invalid, refusal: cannotSign}},
		{"signing needs ssh-signing or openpgp-signing: a token cannot sign",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-git", Role: hub.RoleSigning},
			want{kind: hub.Invalid, refusal: cannotSign}},
		{"signing with ssh-signing",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-sign", Role: hub.RoleSigning},
			want{put: assignments{signing("ws9", "ssh-sign")}, inEffect: assignments{signing("ws9", "ssh-sign")}}},
		{"signing with openpgp-signing",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "pgp", Role: hub.RoleSigning},
			want{put: assignments{signing("ws9", "pgp")}, inEffect: assignments{signing("ws9", "pgp")}}},
		{"authentication needs a login or a token: a signing key cannot authenticate",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-sign", Role: hub.RoleAuthentication, Host: "github.com"},
			want{kind: hub.Invalid, refusal: cannotAuth}},
		{"authentication needs a login or a token: an OpenPGP key cannot authenticate",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "pgp", Role: hub.RoleAuthentication, Host: "github.com"},
			want{kind: hub.Invalid, refusal: cannotAuth}},
		{"authentication with ssh-authentication, its host normalized (R4 refused GitHub.com)",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "GitHub.com."},
			want{put: assignments{auth("ws9", "ssh-auth", "github.com")}, inEffect: assignments{auth("ws9", "ssh-auth", "github.com")}}},
		{"authentication with https-git",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "https://github.com/"},
			want{put: assignments{auth("ws9", "tok-git", "github.com")}, inEffect: assignments{auth("ws9", "tok-git", "github.com")}}},
		{"authentication with github-cli alone",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-gh-ghe", Role: hub.RoleAuthentication, Host: "ghe.example.com"},
			want{put: assignments{auth("ws9", "tok-gh-ghe", "ghe.example.com")}, inEffect: assignments{auth("ws9", "tok-gh-ghe", "ghe.example.com")}}},
		{"authentication with gitlab-cli alone",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-gl", Role: hub.RoleAuthentication, Host: "gitlab.com"},
			want{put: assignments{auth("ws9", "tok-gl", "gitlab.com")}, inEffect: assignments{auth("ws9", "tok-gl", "gitlab.com")}}},
		{"a token's host must equal the assignment host",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "GitLab.com"},
			want{kind: hub.Invalid, refusal: "credential host does not match assignment host: gitlab.com"}},
		{"a token's host differs from the same name without its port",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-443", Role: hub.RoleAuthentication, Host: "example.com"},
			want{kind: hub.Invalid, refusal: "credential host does not match assignment host: example.com"}},
		{"a token's host with its port, written with a leading zero",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "tok-443", Role: hub.RoleAuthentication, Host: "example.com:0443"},
			want{put: assignments{auth("ws9", "tok-443", "example.com:443")}, inEffect: assignments{auth("ws9", "tok-443", "example.com:443")}}},
		{"re-assigning the same credential answers the existing assignment",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "tok-git", Role: hub.RoleAuthentication, Host: "GITHUB.COM"},
			want{inEffect: assignments{auth("ws1", "tok-git", "github.com")}}},
		{"re-assigning the same signing key answers the existing assignment",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "ssh-sign", Role: hub.RoleSigning, Replace: true},
			want{inEffect: assignments{signing("ws1", "ssh-sign")}}},
		{"one authentication default per workspace and host",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com"},
			want{kind: hub.Conflict, refusal: "credential assignment conflicts with existing default: tok-git"}},
		{"replace takes the host's default",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com", Replace: true},
			want{put: assignments{auth("ws1", "ssh-auth", "github.com")}, removed: assignments{auth("ws1", "tok-git", "github.com")},
				inEffect: assignments{auth("ws1", "ssh-auth", "github.com")}}},
		{"one signing default per workspace",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "pgp", Role: hub.RoleSigning},
			want{kind: hub.Conflict, refusal: "credential assignment conflicts with existing default: ssh-sign"}},
		{"replace takes the signing default",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "pgp", Role: hub.RoleSigning, Replace: true},
			want{put: assignments{signing("ws1", "pgp")}, removed: assignments{signing("ws1", "ssh-sign")}, inEffect: assignments{signing("ws1", "pgp")}}},
		{"SSH authentication and signing may be different keys",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "ssh-both", Role: hub.RoleAuthentication, Host: "gitlab.com"},
			want{put: assignments{auth("ws1", "ssh-both", "gitlab.com")}, inEffect: assignments{auth("ws1", "ssh-both", "gitlab.com")}}},
		{"another workspace's default is no conflict",
			credential.AssignRequest{WorkspaceID: "ws2", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com"},
			want{put: assignments{auth("ws2", "ssh-auth", "github.com")}, inEffect: assignments{auth("ws2", "ssh-auth", "github.com")}}},
		{"one GitHub CLI token per workspace, even replacing",
			credential.AssignRequest{WorkspaceID: "ws1", CredentialID: "tok-gh", Role: hub.RoleAuthentication, Host: "github.com", Replace: true},
			want{kind: hub.Conflict, refusal: "a workspace can use the GitHub CLI credential for only one provider host"}},
		{"one GitLab CLI token per workspace",
			credential.AssignRequest{WorkspaceID: "ws2", CredentialID: "tok-gl-2", Role: hub.RoleAuthentication, Host: "gitlab.example.com"},
			want{kind: hub.Conflict, refusal: "a workspace can use the GitLab CLI credential for only one provider host"}},
		{"a CLI token replacing the workspace's other on its host",
			credential.AssignRequest{WorkspaceID: "ws2", CredentialID: "tok-gl-b", Role: hub.RoleAuthentication, Host: "gitlab.com", Replace: true},
			want{put: assignments{auth("ws2", "tok-gl-b", "gitlab.com")}, removed: assignments{auth("ws2", "tok-gl", "gitlab.com")},
				inEffect: assignments{auth("ws2", "tok-gl-b", "gitlab.com")}}},
		{"a disabled credential",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "off", Role: hub.RoleSigning},
			want{kind: hub.Conflict, refusal: "credential is disabled: off"}},
		{"an unknown credential",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "nope", Role: hub.RoleSigning},
			want{kind: hub.NotFound, refusal: "unknown credential: nope"}},
		{"a malformed credential id",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "../x", Role: hub.RoleSigning},
			want{kind: hub.Invalid, refusal: "credential id is invalid"}},
		{"an unknown role",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-both", Role: "owner"},
			want{kind: hub.Invalid, refusal: "role must be authentication or signing"}},
		{"a host with signing",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-sign", Role: hub.RoleSigning, Host: "github.com"},
			want{kind: hub.Invalid, refusal: "host is allowed only with role authentication"}},
		{"authentication without a host",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication},
			want{kind: hub.Invalid, refusal: "host is required for role authentication"}},
		{"a host pattern",
			credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "*"},
			want{kind: hub.Invalid, refusal: "host must be a literal DNS name or IP address, not a pattern"}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c := fixture()
			ch, err := c.Assign(tc.req)
			if tc.refusal != "" {
				failsWith(is, err, tc.kind, tc.refusal)
				is.True(ch.Empty()) // and changes nothing
				return
			}
			is.NoErr(err) // allowed
			checkChange(is, c, ch, tc.put, tc.removed, tc.inEffect)
			is.Equal(ch.Empty(), len(tc.put) == 0)         // an idempotent re-assignment commits nothing
			is.Equal(c.Assignments, fixture().Assignments) // the catalog itself is left as it was
		})
	}
}

// TestTheWorkspacePairReplacesBothRolesOrNeither copies research §8.2's
// workspace operation: at least one role, always replacing, both or
// neither.
func TestTheWorkspacePairReplacesBothRolesOrNeither(t *testing.T) {
	sel := func(id, host string) *hub.AuthenticationSelection {
		return &hub.AuthenticationSelection{CredentialID: id, Host: host}
	}
	str := func(s string) *string { return &s }
	type want struct {
		put, removed, inEffect assignments
		kind                   hub.Kind
		refusal                string
	}
	for _, tc := range []struct {
		row string
		req credential.PairRequest
		want
	}{
		{"an empty body (R4 answered 500)", credential.PairRequest{WorkspaceID: "ws1"},
			want{kind: hub.Invalid, refusal: "at least one of authentication and signing is required"}},
		{"authentication replaces without replace", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("ssh-auth", "GitHub.com")},
			want{put: assignments{auth("ws1", "ssh-auth", "github.com")}, removed: assignments{auth("ws1", "tok-git", "github.com")},
				inEffect: assignments{auth("ws1", "ssh-auth", "github.com")}}},
		{"signing replaces without replace", credential.PairRequest{WorkspaceID: "ws1", Signing: str("pgp")},
			want{put: assignments{signing("ws1", "pgp")}, removed: assignments{signing("ws1", "ssh-sign")}, inEffect: assignments{signing("ws1", "pgp")}}},
		{"both, answered authentication first", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("ssh-both", "github.com"), Signing: str("ssh-both")},
			want{put: assignments{auth("ws1", "ssh-both", "github.com"), signing("ws1", "ssh-both")},
				removed:  assignments{auth("ws1", "tok-git", "github.com"), signing("ws1", "ssh-sign")},
				inEffect: assignments{auth("ws1", "ssh-both", "github.com"), signing("ws1", "ssh-both")}}},
		{"both as they are", credential.PairRequest{WorkspaceID: "ws3", Authentication: sel("ssh-both", "github.com"), Signing: str("ssh-both")},
			want{inEffect: assignments{auth("ws3", "ssh-both", "github.com"), signing("ws3", "ssh-both")}}},
		{"a new workspace", credential.PairRequest{WorkspaceID: "ws9", Authentication: sel("tok-gl", "gitlab.com")},
			want{put: assignments{auth("ws9", "tok-gl", "gitlab.com")}, inEffect: assignments{auth("ws9", "tok-gl", "gitlab.com")}}},
		{"a disabled signing key refuses the authentication too", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("ssh-auth", "github.com"), Signing: str("off")},
			want{kind: hub.Conflict, refusal: "credential is disabled: off"}},
		{"an unfit authentication refuses the signing too", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("pgp", "github.com"), Signing: str("pgp")},
			want{kind: hub.Invalid, refusal: "credential cannot authenticate: it has none of ssh-authentication, https-git, github-cli and gitlab-cli"}},
		{"a token for another host", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("tok-gl", "github.com")},
			want{kind: hub.Invalid, refusal: "credential host does not match assignment host: github.com"}},
		{"an unknown signing credential", credential.PairRequest{WorkspaceID: "ws1", Signing: str("nope")},
			want{kind: hub.NotFound, refusal: "unknown credential: nope"}},
		{"an empty signing id", credential.PairRequest{WorkspaceID: "ws1", Signing: str("")},
			want{kind: hub.Invalid, refusal: "credential id is invalid"}},
		{"a second GitHub CLI token, even replacing", credential.PairRequest{WorkspaceID: "ws1", Authentication: sel("tok-gh", "github.com")},
			want{kind: hub.Conflict, refusal: "a workspace can use the GitHub CLI credential for only one provider host"}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c := fixture()
			ch, err := c.AssignPair(tc.req)
			if tc.refusal != "" {
				failsWith(is, err, tc.kind, tc.refusal)
				is.True(ch.Empty()) // neither role changes
				return
			}
			is.NoErr(err) // allowed
			checkChange(is, c, ch, tc.put, tc.removed, tc.inEffect)
		})
	}
}

// TestWorkspaceAssignmentsShowAsDeduplicatedNames follows the contract's
// credentialAssignments field.
func TestWorkspaceAssignmentsShowAsDeduplicatedNames(t *testing.T) {
	is := is.New(t)
	c := fixture()
	a, s := c.Names("ws1")
	is.Equal(a, []string{"tok-gh-ghe", "tok-git"}) // authentication, in the store's order (by host)
	is.Equal(s, []string{"Signer"})                // signing
	a, s = c.Names("ws3")
	is.Equal(a, []string{"Both"}) // one key for two hosts is named once
	is.Equal(s, []string{"Both"}) // and once for signing
	a, s = c.Names("ws9")
	is.True(a != nil && len(a) == 0)                                                                                                                             // no assignments: an empty array, not null
	is.True(s != nil && len(s) == 0)                                                                                                                             // likewise
	is.Equal(c.AssignmentsOf("ssh-both"), assignments{auth("ws3", "ssh-both", "github.com"), auth("ws3", "ssh-both", "gitlab.com"), signing("ws3", "ssh-both")}) // a credential's own, in order
}

func TestAnAssignmentsPolicyIsKeptChangedOrRefused(t *testing.T) {
	is := is.New(t)
	cat := fixture()
	ch, err := cat.Assign(credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAskOnce})
	is.NoErr(err)                                 // a new assignment
	is.Equal(ch.Put[0].Policy, hub.PolicyAskOnce) // with the policy asked for
	cat.Assignments = ch.After
	ch, err = cat.Assign(credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com"})
	is.NoErr(err)                                      // the same again, no policy named
	is.True(ch.Empty())                                // changes nothing
	is.Equal(ch.InEffect[0].Policy, hub.PolicyAskOnce) // and keeps its policy
	ch, err = cat.Assign(credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAskEveryTime})
	is.NoErr(err)                                      // another policy needs no replace
	is.Equal(ch.Put[0].Policy, hub.PolicyAskEveryTime) // put anew
	is.Equal(ch.Removed[0].Policy, hub.PolicyAskOnce)  // in place of the old
	_, err = cat.Assign(credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "ssh-auth", Role: hub.RoleAuthentication, Host: "github.com", Policy: "sometimes"})
	is.Equal(hub.MessageOf(err), "usePolicy must be always, ask-once or ask-every-time") // an unknown policy
	ch, err = cat.Assign(credential.AssignRequest{WorkspaceID: "ws9", CredentialID: "pgp", Role: hub.RoleSigning})
	is.NoErr(err)
	is.Equal(ch.Put[0].Policy, hub.PolicyAlways) // none named on a new assignment: always
}
