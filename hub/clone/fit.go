package clone

import (
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

var (
	errNotSSH   = hub.Errorf(hub.Invalid, "selected credential is not compatible with SSH clone transport")
	errNotHTTPS = hub.Errorf(hub.Invalid, "selected credential is not compatible with HTTPS clone transport")
)

// UnknownCredential is the refusal of a credentialId the catalog does not
// hold: Invalid (400, as the contract lists it for create, not 404: the
// job is the resource, the credential a field of its request).
func UnknownCredential(id string) error {
	return hub.Errorf(hub.Invalid, "unknown credential: %s", id)
}

// CredentialFits says whether credential c can authenticate the clone of
// src, checked before any process starts, in the earlier system's order
// (research §11.3):
//   - disabled: Conflict "credential is disabled: <id>";
//   - an "other" transport (plain http, git://, file://, a local path):
//     Invalid "selected credentials require an SSH or HTTPS clone URL";
//   - ssh: an SSH key with ssh-authentication (else Invalid), unlocked,
//     its secret in the Hub's memory (else Conflict "selected SSH
//     credential is locked; unlock it before cloning: <id>");
//   - https: a token with https-git (else Invalid) whose host is exactly
//     the URL's, port included (else Invalid "selected credential host
//     does not match clone host: <host>"): a token is never offered to
//     a host it was not made for.
//
// unlocked is whether the vault holds the key (ignored for a token).
func CredentialFits(c hub.Credential, unlocked bool, src Source) error {
	if !c.Enabled {
		return hub.Errorf(hub.Conflict, "credential is disabled: %s", c.ID)
	}
	switch src.Transport {
	case TransportSSH:
		if c.Type != hub.CredentialSSH || !credential.Has(c, hub.CapSSHAuthentication) {
			return errNotSSH
		}
		if !unlocked {
			return hub.Errorf(hub.Conflict, "selected SSH credential is locked; unlock it before cloning: %s", c.ID)
		}
		return nil
	case TransportHTTPS:
		if c.Type != hub.CredentialToken || !credential.Has(c, hub.CapHTTPSGit) {
			return errNotHTTPS
		}
		if !src.Assignable || c.Host != src.Host {
			return hub.Errorf(hub.Invalid, "selected credential host does not match clone host: %s", src.Host)
		}
		return nil
	}
	return errNeedsSSHOrHTTPS
}
