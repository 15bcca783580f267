package credential_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// The kinds of credential the state machine tells apart.
var (
	sshProtected     = hub.Credential{ID: "k1", Type: hub.CredentialSSH, Capabilities: []hub.Capability{hub.CapSSHAuthentication}, Protected: true}
	sshUnprotected   = hub.Credential{ID: "k2", Type: hub.CredentialSSH, Capabilities: []hub.Capability{hub.CapSSHAuthentication}}
	pgpProtected     = hub.Credential{ID: "k3", Type: hub.CredentialOpenPGP, Capabilities: []hub.Capability{hub.CapOpenPGPSigning}, Protected: true}
	pgpUnprotected   = hub.Credential{ID: "k4", Type: hub.CredentialOpenPGP, Capabilities: []hub.Capability{hub.CapOpenPGPSigning}}
	httpsToken       = hub.Credential{ID: "t1", Type: hub.CredentialToken, Capabilities: []hub.Capability{hub.CapHTTPSGit}, Host: "github.com"}
	ghToken          = hub.Credential{ID: "t2", Type: hub.CredentialToken, Capabilities: []hub.Capability{hub.CapHTTPSGit, hub.CapGitHubCLI}, Host: "github.com"}
	glabToken        = hub.Credential{ID: "t3", Type: hub.CredentialToken, Capabilities: []hub.Capability{hub.CapGitLabCLI}, Host: "gitlab.com"}
	enabledLocked    = credential.State{Enabled: true}
	enabledUnlocked  = credential.State{Enabled: true, Unlocked: true}
	disabledLocked   = credential.State{}
	disabledUnlocked = credential.State{Unlocked: true} // not reachable, but a transition must not depend on it
)

// TestCredentialStatesMoveAsTheOperationsSay copies the credential
// operations (the contract's enable, disable, lock, unlock, assign,
// unassign, delete, and test, with api/openapi.yaml's guards and the
// earlier system's messages, research §4.4, §5, §10.1) row by row, each
// named after its operation. Assign, unassign and delete change no state
// of the credential itself: their rows are in assign_test.go and
// unassign_test.go.
func TestCredentialStatesMoveAsTheOperationsSay(t *testing.T) {
	enable := func(c hub.Credential, s credential.State) (credential.State, error) {
		return credential.Enable(c, s), nil
	}
	disable := func(_ hub.Credential, s credential.State) (credential.State, error) {
		return credential.Disable(s), nil
	}
	unlock := func(p string) func(hub.Credential, credential.State) (credential.State, error) {
		return func(c hub.Credential, s credential.State) (credential.State, error) {
			return credential.Unlock(c, s, p)
		}
	}
	for _, tc := range []struct {
		row     string
		c       hub.Credential
		from    credential.State
		op      func(hub.Credential, credential.State) (credential.State, error)
		to      credential.State
		kind    hub.Kind
		refusal string
	}{
		{"enable: a disabled protected key stays locked", sshProtected, disabledLocked, enable, enabledLocked, 0, ""},
		{"enable: a disabled unprotected key is unlocked", sshUnprotected, disabledLocked, enable, enabledUnlocked, 0, ""},
		{"enable: an explicitly locked unprotected key is unlocked", pgpUnprotected, enabledLocked, enable, enabledUnlocked, 0, ""},
		{"enable: an enabled unlocked key stays so", pgpProtected, enabledUnlocked, enable, enabledUnlocked, 0, ""},
		{"enable: an enabled locked protected key stays locked", pgpProtected, enabledLocked, enable, enabledLocked, 0, ""},
		{"enable: a token", httpsToken, disabledLocked, enable, enabledLocked, 0, ""},
		{"disable: an unlocked key is locked", sshProtected, enabledUnlocked, disable, disabledLocked, 0, ""},
		{"disable: a disabled key stays so", sshUnprotected, disabledLocked, disable, disabledLocked, 0, ""},
		{"disable: a token", ghToken, enabledLocked, disable, disabledLocked, 0, ""},
		{"lock: an unlocked SSH key", sshUnprotected, enabledUnlocked, credential.Lock, enabledLocked, 0, ""},
		{"lock: an unlocked OpenPGP key (R4 could not)", pgpProtected, enabledUnlocked, credential.Lock, enabledLocked, 0, ""},
		{"lock: a locked key succeeds", sshProtected, enabledLocked, credential.Lock, enabledLocked, 0, ""},
		{"lock: a disabled key succeeds", sshProtected, disabledUnlocked, credential.Lock, disabledLocked, 0, ""},
		{"lock: a token", httpsToken, enabledLocked, credential.Lock, enabledLocked, hub.Invalid, "token credentials cannot be locked or unlocked"},
		{"unlock: a protected SSH key with its passphrase", sshProtected, enabledLocked, unlock("secret"), enabledUnlocked, 0, ""},
		{"unlock: an unprotected SSH key with an empty passphrase", sshUnprotected, enabledLocked, unlock(""), enabledUnlocked, 0, ""},
		{"unlock: a protected SSH key with an empty passphrase (R4 answered 500)", sshProtected, enabledLocked, unlock(""), enabledLocked, hub.Invalid, "SSH private key passphrase is required"},
		{"unlock: an OpenPGP key with a passphrase", pgpProtected, enabledLocked, unlock("secret"), enabledUnlocked, 0, ""},
		{"unlock: an OpenPGP key with an empty passphrase", pgpUnprotected, enabledLocked, unlock(""), enabledLocked, hub.Invalid, "passphrase must be a non-empty string"},
		{"unlock: an unlocked key succeeds", sshProtected, enabledUnlocked, unlock("secret"), enabledUnlocked, 0, ""},
		{"unlock: a disabled SSH key", sshProtected, disabledLocked, unlock("secret"), disabledLocked, hub.Conflict, "SSH credential is disabled"},
		{"unlock: a disabled OpenPGP key", pgpProtected, disabledLocked, unlock("secret"), disabledLocked, hub.Conflict, "OpenPGP credential is disabled"},
		{"unlock: a control character before the state is looked at", sshProtected, disabledLocked, unlock("se\ncret"), disabledLocked, hub.Invalid, "passphrase must not contain control characters"},
		{"unlock: a token", httpsToken, enabledLocked, unlock("secret"), enabledLocked, hub.Invalid, "token credentials cannot be locked or unlocked"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			tc.c.Enabled = tc.from.Enabled
			to, err := tc.op(tc.c, tc.from)
			if tc.refusal != "" {
				failsWith(is, err, tc.kind, tc.refusal)
			} else {
				is.NoErr(err) // allowed
			}
			is.Equal(to, tc.to) // and where it leaves the credential
		})
	}
}

// TestTestingADisabledCredentialConflictsOnlyForOpenPGP copies research
// §10.1's test row: a disabled OpenPGP key cannot sign the challenge; a
// disabled SSH key or token answers 200 with an unavailable result.
func TestTestingADisabledCredentialConflictsOnlyForOpenPGP(t *testing.T) {
	for _, tc := range []struct {
		row     string
		c       hub.Credential
		enabled bool
		refused bool
	}{
		{"test: a disabled OpenPGP key", pgpProtected, false, true},
		{"test: an enabled OpenPGP key", pgpProtected, true, false},
		{"test: a disabled SSH key", sshProtected, false, false},
		{"test: a disabled token", httpsToken, false, false},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			tc.c.Enabled = tc.enabled
			err := credential.CheckTest(tc.c)
			if tc.refused {
				failsWith(is, err, hub.Conflict, "OpenPGP credential is disabled")
				return
			}
			is.NoErr(err) // tested
		})
	}
}

// TestCredentialsStartAsTheyWereMadeAndAsTheHubRestarts covers the
// states a credential enters without an operation on it.
func TestCredentialsStartAsTheyWereMadeAndAsTheHubRestarts(t *testing.T) {
	for _, tc := range []struct {
		row      string
		c        hub.Credential
		imported bool
		created  credential.State
		atStart  credential.State
	}{
		{"a generated SSH key is catalogued locked", sshProtected, false, enabledLocked, enabledLocked},
		{"a generated OpenPGP key is catalogued locked", pgpProtected, false, enabledLocked, enabledLocked},
		{"an imported protected SSH key is loaded with the passphrase it came with", sshProtected, true, enabledUnlocked, enabledLocked},
		{"an imported unprotected SSH key is loaded, and again at start", sshUnprotected, true, enabledUnlocked, enabledUnlocked},
		{"an imported protected OpenPGP key needs an unlock", pgpProtected, true, enabledLocked, enabledLocked},
		{"an imported unprotected OpenPGP key is loaded", pgpUnprotected, true, enabledUnlocked, enabledUnlocked},
		{"a token has no lock", httpsToken, false, enabledLocked, enabledLocked},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			tc.c.Enabled = true
			is.Equal(credential.Created(tc.c, tc.imported), tc.created) // as made
			is.Equal(credential.AtStart(tc.c), tc.atStart)              // after a Hub restart
			tc.c.Enabled = false
			is.Equal(credential.AtStart(tc.c), disabledLocked) // a disabled key is never loaded at start
		})
	}
	t.Run("a token never reads as unlocked", func(t *testing.T) {
		is := is.New(t)
		is.Equal(credential.StateOf(ghToken, true), disabledLocked) // whatever the vault says of its id
	})
}

// TestOnlyProviderCLITokensStopSessionsWhenRevoked copies research §8.4:
// disabling or deleting a token for gh or glab stops the sessions that
// received it; keys and HTTPS tokens are revoked live.
func TestOnlyProviderCLITokensStopSessionsWhenRevoked(t *testing.T) {
	for _, tc := range []struct {
		row  string
		c    hub.Credential
		stop bool
	}{
		{"a GitHub CLI token", ghToken, true},
		{"a GitLab CLI token", glabToken, true},
		{"an HTTPS-only token", httpsToken, false},
		{"an SSH key", sshProtected, false},
		{"an OpenPGP key", pgpProtected, false},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			is.Equal(credential.RevokeStopsSessions(tc.c), tc.stop) // whether its sessions must stop first
		})
	}
}
