package hub

import (
	"context"
	"time"
)

// The credential ports: the KeyVault that makes, seals and holds keys and
// tokens and lends them to workspace sessions through their own agents,
// and the ToolProber that finds the tools credentials rely on. The
// records they speak of are in credentials.go; the store keeps those
// records and each secret sealed (CredentialStore).

// KeyVault makes, reads and seals the secrets of credentials, holds the
// unlocked ones in memory, and lends them to workspace sessions. It keeps
// no records: the Hub stores each credential's sealed secret beside its
// record and hands it back to unlock it.
//
// Contract:
//   - A secret never leaves the vault but sealed, except a token's value
//     through OpenToken, for the one use that needs it. Errors and logs
//     never carry a secret or a passphrase.
//   - Sealed secrets are opaque. A key the owner protected is sealed with
//     the owner's passphrase (NewKey.Protected): only Unlock with it opens
//     it. Everything else (a key imported without a passphrase, a token)
//     is sealed with the Hub's own key, which the vault keeps apart from
//     the store (the real vault: a 0600 file in the state directory), so a
//     copy of the store alone reveals nothing.
//   - Refusals are Invalid errors whose message says what is wrong with
//     the input ("the passphrase is wrong", "encrypted PKCS#8 keys are not
//     supported"), never quoting it.
//   - Nothing is unlocked when a vault starts: every key is locked until
//     Unlock (the Hub unlocks its unprotected keys at start).
//   - Methods are safe for concurrent use.
type KeyVault interface {
	// GenerateSSH makes an ed25519 key protected by passphrase (non-empty:
	// the caller checked it), with comment in its public key line.
	GenerateSSH(passphrase []byte, comment string) (NewKey, error)
	// ImportSSH reads an OpenSSH, PEM or PKCS#8 private key, encrypted
	// with passphrase when it is: an encrypted key with an empty or wrong
	// passphrase, or one the vault cannot load, is Invalid. A key imported
	// with a passphrase stays protected by it (an unencrypted one becomes
	// encrypted with it); one imported without is sealed by the Hub.
	ImportSSH(privateKey, passphrase []byte) (NewKey, error)
	// GenerateOpenPGP makes an OpenPGP key for userID (such as
	// "Name <mail@example.com>") able to sign, protected by passphrase
	// (non-empty).
	GenerateOpenPGP(userID string, passphrase []byte) (NewKey, error)
	// ImportOpenPGP reads an ASCII-armored secret key: exactly one primary
	// key, which has a key able to sign (itself or a subkey); anything else
	// is Invalid. It keeps its own protection: Protected is whether it has
	// one.
	ImportOpenPGP(armored []byte) (NewKey, error)
	// SealToken seals a token's value with the Hub's key.
	SealToken(token []byte) ([]byte, error)
	// OpenToken returns a sealed token's value. The caller hands it to
	// the one client asking for it and keeps it nowhere.
	OpenToken(sealed []byte) ([]byte, error)

	// Unlock opens the sealed key of credential id (of type t) with
	// passphrase and holds it in memory until Lock: a wrong passphrase is
	// Invalid and changes nothing. An unprotected key ignores the
	// passphrase. Unlocking an unlocked key again succeeds.
	Unlock(id string, t CredentialType, sealed, passphrase []byte) error
	// Lock drops credential id's key from memory, and so from every agent
	// at once. Locking a locked or unknown key does nothing.
	Lock(id string)
	// Unlocked reports whether credential id's key is held in memory.
	Unlocked(id string) bool

	// ServeAgent serves an SSH agent for one workspace session on a new
	// Unix socket at opts.Path (mode 0600; its folder is the session's
	// private runtime folder). It lists and signs with the unlocked keys
	// of the credentials it offers (CredentialAgent.Offer), and nothing
	// else: no key is added, removed or exported through it, and it
	// answers a lock request with a failure.
	ServeAgent(opts AgentOptions) (CredentialAgent, error)
	// SignOpenPGP makes a detached, ASCII-armored signature of data with
	// credential id's unlocked OpenPGP key, as gpg would for git (no
	// Version or Comment armor headers). A locked key is Unavailable.
	SignOpenPGP(id string, data []byte) ([]byte, error)
	// VerifyOpenPGP checks that signature (detached, armored or binary)
	// is a good signature of data by the key whose armored public key is
	// publicKey (its primary key or a signing subkey); anything else — a
	// bad signature, another signer, a malformed input — is Invalid. It
	// holds nothing and needs no unlocked key.
	VerifyOpenPGP(publicKey string, data, signature []byte) error
}

// NewKey is a key the vault made or read.
type NewKey struct {
	// PublicKey is an authorized_keys line (ssh) or an ASCII-armored
	// public key block (openpgp); Fingerprint is "SHA256:…" (ssh) or the
	// primary key's upper-case hex fingerprint (openpgp).
	PublicKey, Fingerprint string
	// Sealed is the secret to store with the record.
	Sealed []byte
	// Protected says Sealed opens only with the owner's passphrase.
	Protected bool
}

// AgentOptions configure one session's agent.
type AgentOptions struct {
	// Path is where its Unix socket is made; nothing may be there.
	Path string
	// OnUse, when set, is asked before each signature, with the
	// credential, what it is for and where: an error refuses the
	// signature (the client sees a failure). It is how the Hub logs every
	// use and holds those that need the owner's approval; it may block,
	// until ctx ends (the agent bounds it).
	OnUse func(ctx context.Context, u CredentialUse) error
}

// CredentialUse is one use of a credential through a session.
type CredentialUse struct {
	CredentialID string
	Purpose      CredentialPurpose
	// Host is the Git host a login or a token is for, when it is known.
	Host string
	At   time.Time
}

// CredentialPurpose says what a credential is used for.
type CredentialPurpose string

// The purposes a session's agent, credential helper and signing program
// tell apart.
const (
	PurposeSSHLogin  CredentialPurpose = "ssh-login"     // log in to a host over SSH
	PurposeSignature CredentialPurpose = "git-signature" // sign a commit or a tag
	PurposeToken     CredentialPurpose = "token"         // hand a token to git or a CLI for a host
)

// CredentialAgent is one session's SSH agent.
type CredentialAgent interface {
	// Path is the agent's socket, for SSH_AUTH_SOCK.
	Path() string
	// Offer replaces the credentials the agent lends: from the next
	// request on, it lists and signs with the unlocked keys among ids
	// only. A key locked meanwhile disappears from it at once.
	Offer(ids []string)
	// Close stops serving and removes the socket; connections open on it
	// end. Closing twice does nothing.
	Close() error
}

// ToolProber finds and identifies the tools credentials rely on.
type ToolProber interface {
	// Probe finds tool (at override, an absolute path, when it is set,
	// and then never on PATH; else on the Hub's PATH) and runs its
	// identification probe, bounded in time (5 s) and output (8 KiB a
	// stream), with a minimal environment, killing what it started. It
	// identifies a tool by what it prints, never by its exit status alone.
	// The record says why a tool is not ready, in the ToolMsg texts
	// (credentialtools.go), with ToolGuidance; a probe never fails. A
	// tool that is not one of CredentialTools is never looked for: it
	// reads as not found. ctx ending stops the probe (ToolMsgCancelled, or
	// ToolMsgTimedOut when its deadline passed).
	Probe(ctx context.Context, tool CredentialToolName, override string) CredentialTool
}
