package credential

import (
	"slices"

	"github.com/wharfhub/wharf/hub"
)

var (
	errType         = hub.Errorf(hub.Invalid, "credential type is invalid")
	errCapsEmpty    = hub.Errorf(hub.Invalid, "capabilities must not be empty")
	errCapsRepeated = hub.Errorf(hub.Invalid, "capabilities must not repeat a capability")
	errCapsBothCLIs = hub.Errorf(hub.Invalid, "a token cannot have both github-cli and gitlab-cli")
	errCapsSSH      = hub.Errorf(hub.Invalid, "an ssh credential's capabilities are ssh-authentication and ssh-signing")
	errCapsOpenPGP  = hub.Errorf(hub.Invalid, "an openpgp credential's capability is openpgp-signing")
	errCapsToken    = hub.Errorf(hub.Invalid, "a token credential's capabilities are https-git, github-cli and gitlab-cli")
	errCapsForType  = map[hub.CredentialType]error{hub.CredentialSSH: errCapsSSH, hub.CredentialOpenPGP: errCapsOpenPGP, hub.CredentialToken: errCapsToken}
	allowedCaps     = map[hub.CredentialType][]hub.Capability{
		hub.CredentialSSH:     {hub.CapSSHAuthentication, hub.CapSSHSigning},
		hub.CredentialOpenPGP: {hub.CapOpenPGPSigning},
		hub.CredentialToken:   {hub.CapHTTPSGit, hub.CapGitHubCLI, hub.CapGitLabCLI},
	}
)

// Capabilities lists the capabilities a credential of type t may have, in
// the contract's order (research §2.1): ssh-authentication and
// ssh-signing for an SSH key, openpgp-signing for an OpenPGP key,
// https-git, github-cli and gitlab-cli for a token. Nil for an unknown
// type.
func Capabilities(t hub.CredentialType) []hub.Capability {
	return slices.Clone(allowedCaps[t])
}

// NormalizeCapabilities checks the capabilities a request gives a new
// credential of type t and returns them in the contract's order (so equal
// sets are equal records): a non-empty set without repeats, each allowed
// for t, and for a token not both github-cli and gitlab-cli (each CLI's
// token variable is not per host, so one token serves one CLI). No
// refusal quotes a value it did not expect.
func NormalizeCapabilities(t hub.CredentialType, caps []hub.Capability) ([]hub.Capability, error) {
	allowed, ok := allowedCaps[t]
	if !ok {
		return nil, errType
	}
	if len(caps) == 0 {
		return nil, errCapsEmpty
	}
	for i, c := range caps {
		if !slices.Contains(allowed, c) {
			return nil, errCapsForType[t]
		}
		if slices.Contains(caps[:i], c) {
			return nil, errCapsRepeated
		}
	}
	if slices.Contains(caps, hub.CapGitHubCLI) && slices.Contains(caps, hub.CapGitLabCLI) {
		return nil, errCapsBothCLIs
	}
	out := make([]hub.Capability, 0, len(caps))
	for _, c := range allowed {
		if slices.Contains(caps, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Has reports whether c holds capability capability.
func Has(c hub.Credential, capability hub.Capability) bool {
	return slices.Contains(c.Capabilities, capability)
}

// CanSign reports whether c may be a workspace's signing default: it signs
// commits (ssh-signing or openpgp-signing).
func CanSign(c hub.Credential) bool {
	return Has(c, hub.CapSSHSigning) || Has(c, hub.CapOpenPGPSigning)
}

// CanAuthenticate reports whether c may be a workspace's authentication
// default for a host: it logs in over SSH, or is a token for Git over
// HTTPS or for a provider's CLI (a CLI-only token is handed to that CLI
// and never offered to Git).
func CanAuthenticate(c hub.Credential) bool {
	return Has(c, hub.CapSSHAuthentication) || Has(c, hub.CapHTTPSGit) || Has(c, hub.CapGitHubCLI) || Has(c, hub.CapGitLabCLI)
}
