package credential

import (
	"github.com/wharfhub/wharf/hub"
)

// The readiness messages (research §2.3, §4.6, §5), said of what Wharf
// holds: keys live in the Hub's own memory (KeyVault), not in ssh-agent or
// gpg-agent, so no OpenSSH or GnuPG tool is needed for a key to be ready.
// None carries a secret, a path or a socket.
const (
	msgDisabled        = "The credential is disabled."
	msgSSHUnlocked     = "The SSH credential is unlocked in the Hub."
	msgSSHLocked       = "The SSH credential requires unlock."
	msgOpenPGPUnlocked = "The OpenPGP signing key is unlocked in the Hub."
	msgOpenPGPLocked   = "The OpenPGP signing key requires unlock."
	msgTokenReady      = "The token credential is available."
	msgTokenMissing    = "The token credential is unavailable."
	msgUndetermined    = "Credential readiness could not be determined."

	msgTestSSHReady     = "The SSH credential is loaded in the Hub."
	msgTestSSHLocked    = "The SSH credential is locked or unavailable."
	msgTestSigned       = "The fixed Hub challenge was signed and verified locally."
	msgTestSignFailed   = "OpenPGP signing test failed or requires unlock."
	msgTestVerifyFailed = "OpenPGP signature verification failed."
)

// Readiness is a credential's readiness as its record shows it: a
// function of the record and of whether the vault holds its key, so
// reading it (every GET) changes nothing — it never loads a key, not even
// an unprotected one the owner locked. One result:
//   - a disabled credential: credential/unavailable "The credential is
//     disabled.";
//   - an SSH key: runtime/ready "The SSH credential is unlocked in the
//     Hub." or runtime/unavailable "The SSH credential requires unlock.";
//   - an OpenPGP key: runtime/ready "The OpenPGP signing key is unlocked in
//     the Hub." or runtime/unavailable "The OpenPGP signing key requires
//     unlock.";
//   - a token: credential/ready "The token credential is available." (its
//     value is sealed with the Hub's key, which needs no unlock).
func Readiness(c hub.Credential, unlocked bool) []hub.ReadinessResult {
	if !c.Enabled {
		return one(hub.LayerCredential, hub.StatusUnavailable, msgDisabled)
	}
	switch c.Type {
	case hub.CredentialSSH:
		return lockResult(unlocked, msgSSHUnlocked, msgSSHLocked)
	case hub.CredentialOpenPGP:
		return lockResult(unlocked, msgOpenPGPUnlocked, msgOpenPGPLocked)
	case hub.CredentialToken:
		return one(hub.LayerCredential, hub.StatusReady, msgTokenReady)
	}
	return Undetermined()
}

// Undetermined is the readiness of a credential whose probe failed, in
// place of its own (the list answers it for that credential alone):
// runtime/unavailable "Credential readiness could not be determined.".
func Undetermined() []hub.ReadinessResult {
	return one(hub.LayerRuntime, hub.StatusUnavailable, msgUndetermined)
}

// TestChallenge is what the test of an OpenPGP key signs and verifies: a
// fixed text, so a test proves the key signs without signing anything of
// the owner's.
const TestChallenge = "wharf hub OpenPGP signing capability v1\n"

// Signature is how an OpenPGP test's signature of TestChallenge went.
type Signature int

// The outcomes of an OpenPGP test.
const (
	SignatureFailed   Signature = iota // the vault did not sign: the key is locked, or signing failed
	SignatureVerified                  // signed, and the signature verified with the record's public key
	SignatureInvalid                   // signed, but the signature did not verify
)

// TestFacts are what a credential's test found.
type TestFacts struct {
	// Unlocked: the vault holds the SSH key.
	Unlocked bool
	// TokenOpens: the token's sealed value is stored and opens with the
	// Hub's key (KeyVault.OpenToken), so it can be handed out.
	TokenOpens bool
	// Signature: how the OpenPGP key's signature of TestChallenge went.
	Signature Signature
}

// TestResults answers hubTestCredential for c (which CheckTest allowed):
// one result, never a secret. A disabled SSH key or token reports
// credential/unavailable "The credential is disabled."; otherwise an SSH
// key reports whether it is loaded, an OpenPGP key how its signature of
// TestChallenge went, a token whether its value opens.
func TestResults(c hub.Credential, f TestFacts) []hub.ReadinessResult {
	if !c.Enabled {
		return one(hub.LayerCredential, hub.StatusUnavailable, msgDisabled)
	}
	switch c.Type {
	case hub.CredentialSSH:
		if f.Unlocked {
			return one(hub.LayerCapability, hub.StatusReady, msgTestSSHReady)
		}
		return one(hub.LayerCapability, hub.StatusUnavailable, msgTestSSHLocked)
	case hub.CredentialOpenPGP:
		switch f.Signature {
		case SignatureVerified:
			return one(hub.LayerCapability, hub.StatusReady, msgTestSigned)
		case SignatureInvalid:
			return one(hub.LayerCapability, hub.StatusUnavailable, msgTestVerifyFailed)
		}
		return one(hub.LayerCapability, hub.StatusUnavailable, msgTestSignFailed)
	case hub.CredentialToken:
		if f.TokenOpens {
			return one(hub.LayerCredential, hub.StatusReady, msgTokenReady)
		}
		return one(hub.LayerCredential, hub.StatusUnavailable, msgTokenMissing)
	}
	return Undetermined()
}

func lockResult(unlocked bool, ready, locked string) []hub.ReadinessResult {
	if unlocked {
		return one(hub.LayerRuntime, hub.StatusReady, ready)
	}
	return one(hub.LayerRuntime, hub.StatusUnavailable, locked)
}

func one(layer, status, message string) []hub.ReadinessResult {
	return []hub.ReadinessResult{{Layer: layer, Status: status, Message: message}}
}
