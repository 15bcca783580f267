package credential_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

func result(layer, status, message string) []hub.ReadinessResult {
	return []hub.ReadinessResult{{Layer: layer, Status: status, Message: message}}
}

// TestReadinessSaysWhatTheHubHolds copies research §2.3's rows, said of
// keys held in the Hub rather than in ssh-agent or gpg-agent (so no tool
// row: no tool is needed for a key to be ready).
func TestReadinessSaysWhatTheHubHolds(t *testing.T) {
	disabled := result(hub.LayerCredential, hub.StatusUnavailable, "The credential is disabled.")
	for _, tc := range []struct {
		row      string
		c        hub.Credential
		enabled  bool
		unlocked bool
		want     []hub.ReadinessResult
	}{
		{"credential disabled (an unlocked key)", sshProtected, false, true, disabled},
		{"credential disabled (a token)", httpsToken, false, false, disabled},
		{"ssh unlocked", sshProtected, true, true, result(hub.LayerRuntime, hub.StatusReady, "The SSH credential is unlocked in the Hub.")},
		{"ssh locked", sshProtected, true, false, result(hub.LayerRuntime, hub.StatusUnavailable, "The SSH credential requires unlock.")},
		{"ssh unprotected and locked is not loaded by reading (R4 auto-loaded it)", sshUnprotected, true, false,
			result(hub.LayerRuntime, hub.StatusUnavailable, "The SSH credential requires unlock.")},
		{"openpgp unlocked", pgpProtected, true, true, result(hub.LayerRuntime, hub.StatusReady, "The OpenPGP signing key is unlocked in the Hub.")},
		{"openpgp locked", pgpProtected, true, false, result(hub.LayerRuntime, hub.StatusUnavailable, "The OpenPGP signing key requires unlock.")},
		{"token", ghToken, true, false, result(hub.LayerCredential, hub.StatusReady, "The token credential is available.")},
		{"an unknown type", hub.Credential{Type: "x509"}, true, true, result(hub.LayerRuntime, hub.StatusUnavailable, "Credential readiness could not be determined.")},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			tc.c.Enabled = tc.enabled
			before := tc.c
			got := credential.Readiness(tc.c, tc.unlocked)
			is.Equal(got, tc.want)                                     // its result
			is.Equal(credential.Readiness(tc.c, tc.unlocked), tc.want) // and the same when read again
			is.Equal(tc.c, before)                                     // the record untouched
		})
	}
	t.Run("the probe itself failed", func(t *testing.T) {
		is := is.New(t)
		is.Equal(credential.Undetermined(), result(hub.LayerRuntime, hub.StatusUnavailable, "Credential readiness could not be determined.")) // one result for that credential alone
	})
}

// TestATestReportsWhatItTried copies research §4.6 (SSH), §5 (OpenPGP's
// challenge) and §6 (a token's stored value), with §10.1's disabled rows.
func TestATestReportsWhatItTried(t *testing.T) {
	disabled := result(hub.LayerCredential, hub.StatusUnavailable, "The credential is disabled.")
	for _, tc := range []struct {
		row     string
		c       hub.Credential
		enabled bool
		facts   credential.TestFacts
		want    []hub.ReadinessResult
	}{
		{"ssh loaded", sshProtected, true, credential.TestFacts{Unlocked: true}, result(hub.LayerCapability, hub.StatusReady, "The SSH credential is loaded in the Hub.")},
		{"ssh locked", sshProtected, true, credential.TestFacts{}, result(hub.LayerCapability, hub.StatusUnavailable, "The SSH credential is locked or unavailable.")},
		{"ssh disabled answers 200 unavailable", sshProtected, false, credential.TestFacts{Unlocked: true}, disabled},
		{"openpgp signed and verified", pgpProtected, true, credential.TestFacts{Signature: credential.SignatureVerified},
			result(hub.LayerCapability, hub.StatusReady, "The fixed Hub challenge was signed and verified locally.")},
		{"openpgp did not sign (locked)", pgpProtected, true, credential.TestFacts{Signature: credential.SignatureFailed},
			result(hub.LayerCapability, hub.StatusUnavailable, "OpenPGP signing test failed or requires unlock.")},
		{"openpgp signed but did not verify", pgpProtected, true, credential.TestFacts{Signature: credential.SignatureInvalid},
			result(hub.LayerCapability, hub.StatusUnavailable, "OpenPGP signature verification failed.")},
		{"token stored", httpsToken, true, credential.TestFacts{TokenOpens: true}, result(hub.LayerCredential, hub.StatusReady, "The token credential is available.")},
		{"token missing or not opening", httpsToken, true, credential.TestFacts{}, result(hub.LayerCredential, hub.StatusUnavailable, "The token credential is unavailable.")},
		{"token disabled answers 200 unavailable", httpsToken, false, credential.TestFacts{TokenOpens: true}, disabled},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			tc.c.Enabled = tc.enabled
			is.Equal(credential.TestResults(tc.c, tc.facts), tc.want) // its one result
		})
	}
}
