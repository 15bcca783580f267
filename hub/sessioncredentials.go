package hub

import "context"

// A workspace session's credential projection: what the Hub lends one
// session (WorkspaceSessionSpec.Credentials) and how the session asks for
// it. The Backend turns it into the session's environment — its own SSH
// agent socket, a generated git config and ssh_config, the credential
// helper and signing program that ask the Hub — so that the session's
// git, ssh and provider CLIs use exactly the credentials assigned to its
// workspace and nothing the Hub user has ambiently. A backend on another
// machine forwards the same requests.
//
// Only two things cross to the session: public halves (to tell ssh and
// git which key to use) and a provider CLI's token (gh and glab read it
// nowhere but their environment). Every private key stays in the vault
// behind the session's agent; every HTTPS token is handed to git one
// request at a time, checked live, through the broker.

// SessionCredentials is one session's credential projection. The zero
// value lends nothing; the backend still removes every ambient credential
// from the session's environment.
type SessionCredentials struct {
	// Logins are the workspace's authentication defaults, one per host,
	// sorted by host.
	Logins []SessionLogin
	// Signing is the workspace's signing default, or nil.
	Signing *SessionSigning
	// CLITokens are the tokens handed to a provider CLI (gh, glab), at
	// most one per tool. Disabling or deleting one stops the sessions
	// that were given it (credential.RevokeStopsSessions).
	CLITokens []SessionCLIToken
	// Tools are the absolute paths of the credential tools the
	// projection runs (ssh, ssh-keygen, git, gh, glab), of those found;
	// the backend never looks a tool up on PATH itself.
	Tools map[CredentialToolName]string
	// Broker answers the session's requests for its credentials. It is
	// nil when Logins, Signing and CLITokens are all empty.
	Broker SessionBroker
}

// Empty reports whether the projection lends nothing.
func (c SessionCredentials) Empty() bool {
	return len(c.Logins) == 0 && c.Signing == nil && len(c.CLITokens) == 0
}

// SessionLogin is one authentication default: the credential git and ssh
// use for one host.
type SessionLogin struct {
	// Host is normalized (credential.NormalizeHost): "name", "name:port",
	// "[v6]" or "[v6]:port".
	Host         string
	CredentialID string
	// Type is CredentialSSH (ssh logs in through the session's agent) or
	// CredentialToken.
	Type CredentialType
	// PublicKey is an SSH key's authorized_keys line, for ssh_config's
	// IdentityFile, so that ssh offers this key alone to Host.
	PublicKey string
	// HTTPS says a token is offered to git over HTTPS for Host: git's
	// credential helper asks the Broker (Token).
	HTTPS bool
}

// SessionSigning is the signing default: how git signs commits.
type SessionSigning struct {
	CredentialID string
	// Type is CredentialSSH (gpg.format=ssh, signing through the
	// session's agent) or CredentialOpenPGP (gpg.program is the signing
	// program, which asks the Broker: SignOpenPGP).
	Type CredentialType
	// PublicKey is an SSH key's authorized_keys line (user.signingkey),
	// or an OpenPGP key's armored public key (to verify what it signed).
	PublicKey string
	// Fingerprint is the key's fingerprint ("SHA256:…", or upper-case
	// hex for OpenPGP).
	Fingerprint string
}

// SessionCLIToken is a token handed to a provider CLI.
type SessionCLIToken struct {
	// Tool is ToolGH or ToolGLab.
	Tool         CredentialToolName
	Host         string
	CredentialID string
	Token        []byte
}

// SessionBroker answers one session's requests for its credentials. The
// Hub implements it and checks every request against the workspace's
// assignments and the credentials as they are at that moment: what was
// unassigned, disabled, locked or deleted after the session started is
// refused. Each use is logged, and held for the owner's approval when
// the assignment asks for it, within ctx. Refusals never say more than
// that nothing is available; methods are safe for concurrent use, and
// every one fails once the session has ended.
type SessionBroker interface {
	// ServeAgent serves the session's SSH agent on a new Unix socket at
	// path, in the session's private runtime folder, offering the
	// workspace's assigned, enabled, unlocked SSH keys and following
	// every change of them at once. The backend closes it when the
	// session ends.
	ServeAgent(path string) (CredentialAgent, error)
	// Token answers git's credential helper for an HTTPS request to host
	// (normalized by the Hub): the user name and token of the workspace's
	// authentication default for host when it is an enabled token with
	// https-git, else a NotFound error (git then gets nothing). The caller
	// writes the token to git and keeps it nowhere.
	Token(ctx context.Context, host string) (username string, token []byte, err error)
	// SignOpenPGP makes a detached, armored signature of data with the
	// workspace's signing default, an enabled, unlocked OpenPGP key; a
	// locked one is Unavailable, none is NotFound.
	SignOpenPGP(ctx context.Context, data []byte) ([]byte, error)
}
