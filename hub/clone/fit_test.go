package clone_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

// TestACloneCredentialMustFitTheURLsTransport copies research §11.3's
// table row by row.
func TestACloneCredentialMustFitTheURLsTransport(t *testing.T) {
	key := hub.Credential{ID: "k1", Type: hub.CredentialSSH, Enabled: true, Capabilities: []hub.Capability{hub.CapSSHAuthentication}}
	signer := hub.Credential{ID: "k2", Type: hub.CredentialSSH, Enabled: true, Capabilities: []hub.Capability{hub.CapSSHSigning}}
	token := hub.Credential{ID: "t1", Type: hub.CredentialToken, Enabled: true, Host: "github.com", Capabilities: []hub.Capability{hub.CapHTTPSGit}}
	cli := hub.Credential{ID: "t2", Type: hub.CredentialToken, Enabled: true, Host: "github.com", Capabilities: []hub.Capability{hub.CapGitHubCLI}}
	pgp := hub.Credential{ID: "p1", Type: hub.CredentialOpenPGP, Enabled: true, Capabilities: []hub.Capability{hub.CapOpenPGPSigning}}
	off := func(c hub.Credential) hub.Credential { c.Enabled = false; return c }
	src := func(u string) clone.Source {
		s, err := clone.CheckURL(u)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sshURL, httpsURL := src("git@github.com:me/r.git"), src("https://github.com/me/r.git")
	for _, tc := range []struct {
		row      string
		c        hub.Credential
		unlocked bool
		src      clone.Source
		kind     hub.Kind
		refusal  string
	}{
		{"an unlocked SSH key for ssh", key, true, sshURL, 0, ""},
		{"a token for its https host", token, false, httpsURL, 0, ""},
		{"disabled", off(key), true, sshURL, hub.Conflict, "credential is disabled: k1"},
		{"disabled before the transport", off(token), false, src("/srv/r"), hub.Conflict, "credential is disabled: t1"},
		{"transport other: a local path", key, true, src("/srv/r"), hub.Invalid, "selected credentials require an SSH or HTTPS clone URL"},
		{"transport other: plain http", token, false, src("http://github.com/me/r.git"), hub.Invalid, "selected credentials require an SSH or HTTPS clone URL"},
		{"transport other: git://", key, true, src("git://github.com/me/r.git"), hub.Invalid, "selected credentials require an SSH or HTTPS clone URL"},
		{"ssh: a token", token, true, sshURL, hub.Invalid, "selected credential is not compatible with SSH clone transport"},
		{"ssh: a signing-only key", signer, true, sshURL, hub.Invalid, "selected credential is not compatible with SSH clone transport"},
		{"ssh: an OpenPGP key", pgp, true, sshURL, hub.Invalid, "selected credential is not compatible with SSH clone transport"},
		{"ssh: locked", key, false, sshURL, hub.Conflict, "selected SSH credential is locked; unlock it before cloning: k1"},
		{"ssh: an alias host takes the key", key, true, src("work_box:r.git"), 0, ""},
		{"https: an SSH key", key, true, httpsURL, hub.Invalid, "selected credential is not compatible with HTTPS clone transport"},
		{"https: a CLI-only token", cli, false, httpsURL, hub.Invalid, "selected credential is not compatible with HTTPS clone transport"},
		{"https: another host", token, false, src("https://gitlab.com/me/r.git"), hub.Invalid, "selected credential host does not match clone host: gitlab.com"},
		{"https: another port", token, false, src("https://github.com:8443/me/r.git"), hub.Invalid, "selected credential host does not match clone host: github.com:8443"},
		{"https: :443 is not the bare host", token, false, src("https://github.com:443/me/r.git"), hub.Invalid, "selected credential host does not match clone host: github.com:443"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			refused(is.New(t), clone.CredentialFits(tc.c, tc.unlocked, tc.src), tc.kind, tc.refusal)
		})
	}
}

func TestAnUnknownCloneCredentialIsInvalidInput(t *testing.T) {
	refused(is.New(t), clone.UnknownCredential("abc"), hub.Invalid, "unknown credential: abc")
}
