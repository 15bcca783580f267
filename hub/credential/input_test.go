package credential_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// refused asserts err is an Invalid error with message msg, or nil when
// msg is "".
func refused(is *is.I, err error, msg string) {
	is.Helper()
	if msg == "" {
		is.NoErr(err) // accepted
		return
	}
	is.Equal(hub.KindOf(err), hub.Invalid) // refused as invalid
	is.Equal(hub.MessageOf(err), msg)      // with its message
}

func TestCredentialIDsFollowTheContractsPattern(t *testing.T) {
	const invalid = "credential id is invalid"
	for _, tc := range []struct{ row, id, refusal string }{
		{"a UUID", "0b8f4f8e-3c1a-4f55-9d44-1f6f3f7a9d21", ""},
		{"letters, digits, _ and -", "A_z-09", ""},
		{"128 characters", strings.Repeat("a", 128), ""},
		{"empty", "", invalid},
		{"129 characters", strings.Repeat("a", 129), invalid},
		{"a dot", "a.b", invalid},
		{"a slash", "a/b", invalid},
		{"a percent escape", "a%2Fb", invalid},
		{"a space", "a b", invalid},
		{"a non-ASCII letter", "é", invalid},
		{"NUL", "a\x00", invalid},
	} {
		t.Run(tc.row, func(t *testing.T) {
			refused(is.New(t), credential.CheckID(tc.id), tc.refusal)
		})
	}
}

func TestCredentialNamesAreVisibleTextOfAtMost256Bytes(t *testing.T) {
	for _, tc := range []struct{ row, name, want, refusal string }{
		{"a plain name", "laptop key", "laptop key", ""},
		{"trimmed as clients trim", "\u00a0 work key\t", "work key", ""},
		{"256 bytes", strings.Repeat("é", 128), strings.Repeat("é", 128), ""},
		{"257 bytes", strings.Repeat("é", 128) + "a", "", "credential name must be at most 256 bytes"},
		{"empty", "", "", "credential name must not be empty"},
		{"only white space", "   ", "", "credential name must not be empty"},
		{"a control character", "key\x00", "", "credential name must not contain control characters"},
		{"a C1 control character", "key\u0085x", "", "credential name must not contain control characters"},
		{"a line break inside", "a\nb", "", "credential name must not contain control characters"},
		{"a zero-width space", "key\u200b1", "", "credential name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"a bidi override", "\u202ekey", "", "credential name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"invalid UTF-8", "key\xff", "", "credential name must be valid UTF-8"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := credential.NormalizeName(tc.name)
			refused(is, err, tc.refusal)
			is.Equal(got, tc.want) // the stored form
		})
	}
}

func TestANewKeysPassphraseIsRequiredBoundedAndFreeOfControlCharacters(t *testing.T) {
	for _, tc := range []struct{ row, passphrase, refusal string }{
		{"a passphrase", "correct horse battery staple", ""},
		{"surrounding spaces are part of it", "  pass  ", ""},
		{"4096 bytes", strings.Repeat("p", 4096), ""},
		{"non-ASCII", "pässwörd", ""},
		{"empty", "", "passphrase must be a non-empty string"},
		{"only white space", " \u00a0 ", "passphrase must be a non-empty string"},
		{"only a zero-width space", "\u200b", "passphrase must be a non-empty string"},
		{"4097 bytes", strings.Repeat("p", 4097), "passphrase must be at most 4096 bytes"},
		{"NUL", "pass\x00word", "passphrase must not contain control characters"},
		{"a newline", "pass\n", "passphrase must not contain control characters"},
		{"a tab", "pass\tword", "passphrase must not contain control characters"},
		{"DEL", "pass\x7f", "passphrase must not contain control characters"},
		{"invalid UTF-8", "pass\xff", "passphrase must be valid UTF-8"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			refused(is.New(t), credential.CheckNewPassphrase(tc.passphrase), tc.refusal)
		})
	}
}

func TestAnUnlockPassphraseMayBeEmptyForSSHOnly(t *testing.T) {
	for _, tc := range []struct {
		row        string
		typ        hub.CredentialType
		passphrase string
		refusal    string
	}{
		{"ssh, empty (an unencrypted key)", hub.CredentialSSH, "", ""},
		{"ssh, a passphrase", hub.CredentialSSH, "secret", ""},
		{"ssh, only spaces (a key's own passphrase may be)", hub.CredentialSSH, "  ", ""},
		{"ssh, a control character", hub.CredentialSSH, "se\x1bcret", "passphrase must not contain control characters"},
		{"ssh, 4097 bytes", hub.CredentialSSH, strings.Repeat("p", 4097), "passphrase must be at most 4096 bytes"},
		{"openpgp, empty", hub.CredentialOpenPGP, "", "passphrase must be a non-empty string"},
		{"openpgp, a passphrase", hub.CredentialOpenPGP, "secret", ""},
		{"openpgp, a control character", hub.CredentialOpenPGP, "secret\r", "passphrase must not contain control characters"},
		{"token, empty", hub.CredentialToken, "", "token credentials cannot be locked or unlocked"},
		{"token, a passphrase", hub.CredentialToken, "secret", "token credentials cannot be locked or unlocked"},
		{"an unknown type", "x509", "secret", "credential type is invalid"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			refused(is.New(t), credential.CheckPassphrase(tc.typ, tc.passphrase), tc.refusal)
		})
	}
}

func TestOpenPGPUserIDsAreVisibleTextOfAtMost256Bytes(t *testing.T) {
	for _, tc := range []struct{ row, id, want, refusal string }{
		{"a name and a mail address", "Ada Lovelace <ada@example.com>", "Ada Lovelace <ada@example.com>", ""},
		{"trimmed", " Ada <ada@example.com> ", "Ada <ada@example.com>", ""},
		{"256 bytes", strings.Repeat("a", 256), strings.Repeat("a", 256), ""},
		{"257 bytes", strings.Repeat("a", 257), "", "OpenPGP user id must be at most 256 bytes"},
		{"empty", "", "", "OpenPGP user id must not be empty"},
		{"a newline (a forged status line)", "Ada\n[GNUPG:] GOODSIG", "", "OpenPGP user id must not contain control characters"},
		{"a bidi override", "Ada \u202e<moc.elpmaxe@ada>", "", "OpenPGP user id must not contain format characters (zero-width, bidi or byte-order marks)"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := credential.NormalizeUserID(tc.id)
			refused(is, err, tc.refusal)
			is.Equal(got, tc.want) // the form the key is made with
		})
	}
}

func TestTokensAreOneTo65536BytesWithoutLineBreaks(t *testing.T) {
	for _, tc := range []struct{ row, token, refusal string }{
		{"a token", "ghp_0123456789abcdefABCDEF", ""},
		{"65536 bytes", strings.Repeat("t", 65536), ""},
		{"a tab and spaces are kept", " a\tb ", ""},
		{"empty", "", "token must be a non-empty string"},
		{"65537 bytes", "s3cr3t" + strings.Repeat("t", 65531), "token must be at most 65536 bytes"},
		{"NUL", "s3cr3t\x00", "token must not contain NUL, CR or LF"},
		{"CR", "s3cr3t\r", "token must not contain NUL, CR or LF"},
		{"LF (a forged credential line)", "s3cr3t\npassword=other", "token must not contain NUL, CR or LF"},
		{"invalid UTF-8", "s3cr3t\xff", "token must be valid UTF-8"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			err := credential.CheckToken(tc.token)
			refused(is, err, tc.refusal)
			if err != nil {
				is.True(!strings.Contains(err.Error(), "s3cr3t")) // the refusal never quotes the token
			}
		})
	}
}

func TestTokenUsernamesAreOptionalAndFreeOfControlCharacters(t *testing.T) {
	for _, tc := range []struct{ row, username, refusal string }{
		{"none", "", ""},
		{"a user name", "x-access-token", ""},
		{"256 bytes", strings.Repeat("u", 256), ""},
		{"257 bytes", strings.Repeat("u", 257), "username must be at most 256 bytes"},
		{"LF (a forged credential line)", "me\npassword=x", "username must not contain control characters"},
		{"CR", "me\r", "username must not contain control characters"},
		{"NUL", "me\x00", "username must not contain control characters"},
		{"invalid UTF-8", "me\xff", "username must be valid UTF-8"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			refused(is.New(t), credential.CheckUsername(tc.username), tc.refusal)
		})
	}
	t.Run("a token without one is sent as oauth2", func(t *testing.T) {
		is := is.New(t)
		is.Equal(credential.Username(hub.Credential{}), "oauth2")             // the default
		is.Equal(credential.Username(hub.Credential{Username: "bot"}), "bot") // its own
	})
}

func TestCapabilitiesFitTheirType(t *testing.T) {
	const (
		ssh      = "an ssh credential's capabilities are ssh-authentication and ssh-signing"
		openpgp  = "an openpgp credential's capability is openpgp-signing"
		token    = "a token credential's capabilities are https-git, github-cli and gitlab-cli"
		empty    = "capabilities must not be empty"
		repeated = "capabilities must not repeat a capability"
		both     = "a token cannot have both github-cli and gitlab-cli"
	)
	type caps = []hub.Capability
	for _, tc := range []struct {
		row     string
		typ     hub.CredentialType
		in      caps
		want    caps
		refusal string
	}{
		// §2.1: ssh ⊆ {ssh-authentication, ssh-signing}, non-empty, no duplicates.
		{"ssh authentication", hub.CredentialSSH, caps{hub.CapSSHAuthentication}, caps{hub.CapSSHAuthentication}, ""},
		{"ssh signing", hub.CredentialSSH, caps{hub.CapSSHSigning}, caps{hub.CapSSHSigning}, ""},
		{"ssh both, in the contract's order", hub.CredentialSSH, caps{hub.CapSSHSigning, hub.CapSSHAuthentication}, caps{hub.CapSSHAuthentication, hub.CapSSHSigning}, ""},
		{"ssh none", hub.CredentialSSH, caps{}, nil, empty},
		{"ssh nil", hub.CredentialSSH, nil, nil, empty},
		{"ssh twice", hub.CredentialSSH, caps{hub.CapSSHSigning, hub.CapSSHSigning}, nil, repeated},
		{"ssh with openpgp-signing", hub.CredentialSSH, caps{hub.CapOpenPGPSigning}, nil, ssh},
		{"ssh with https-git", hub.CredentialSSH, caps{hub.CapSSHAuthentication, hub.CapHTTPSGit}, nil, ssh},
		{"ssh with an unknown capability", hub.CredentialSSH, caps{"root"}, nil, ssh},
		// §2.1: openpgp = {openpgp-signing}.
		{"openpgp signing", hub.CredentialOpenPGP, caps{hub.CapOpenPGPSigning}, caps{hub.CapOpenPGPSigning}, ""},
		{"openpgp none", hub.CredentialOpenPGP, caps{}, nil, empty},
		{"openpgp twice", hub.CredentialOpenPGP, caps{hub.CapOpenPGPSigning, hub.CapOpenPGPSigning}, nil, repeated},
		{"openpgp with ssh-signing", hub.CredentialOpenPGP, caps{hub.CapSSHSigning}, nil, openpgp},
		// §2.1: token ⊆ {https-git, github-cli, gitlab-cli}, not both CLIs.
		{"token https-git", hub.CredentialToken, caps{hub.CapHTTPSGit}, caps{hub.CapHTTPSGit}, ""},
		{"token github-cli only (provider-only)", hub.CredentialToken, caps{hub.CapGitHubCLI}, caps{hub.CapGitHubCLI}, ""},
		{"token gitlab-cli and https-git, in order", hub.CredentialToken, caps{hub.CapGitLabCLI, hub.CapHTTPSGit}, caps{hub.CapHTTPSGit, hub.CapGitLabCLI}, ""},
		{"token both CLIs", hub.CredentialToken, caps{hub.CapGitHubCLI, hub.CapGitLabCLI}, nil, both},
		{"token both CLIs and https-git", hub.CredentialToken, caps{hub.CapHTTPSGit, hub.CapGitHubCLI, hub.CapGitLabCLI}, nil, both},
		{"token none", hub.CredentialToken, caps{}, nil, empty},
		{"token twice", hub.CredentialToken, caps{hub.CapHTTPSGit, hub.CapHTTPSGit}, nil, repeated},
		{"token with ssh-authentication", hub.CredentialToken, caps{hub.CapSSHAuthentication}, nil, token},
		{"an unknown type", "x509", caps{hub.CapSSHSigning}, nil, "credential type is invalid"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			got, err := credential.NormalizeCapabilities(tc.typ, tc.in)
			refused(is, err, tc.refusal)
			is.Equal(got, tc.want) // the stored set, in the contract's order
		})
	}
}

func TestRolesNeedTheirCapabilities(t *testing.T) {
	for _, tc := range []struct {
		capability           hub.Capability
		signs, authenticates bool
	}{
		{hub.CapSSHAuthentication, false, true},
		{hub.CapSSHSigning, true, false},
		{hub.CapOpenPGPSigning, true, false},
		{hub.CapHTTPSGit, false, true},
		{hub.CapGitHubCLI, false, true},
		{hub.CapGitLabCLI, false, true},
	} {
		t.Run(string(tc.capability), func(t *testing.T) {
			is := is.New(t)
			c := hub.Credential{Capabilities: []hub.Capability{tc.capability}}
			is.Equal(credential.CanSign(c), tc.signs)                 // signing needs ssh-signing or openpgp-signing
			is.Equal(credential.CanAuthenticate(c), tc.authenticates) // authentication needs a login or a token
		})
	}
}

func TestADuplicateKeyIsRefusedAsInvalidInput(t *testing.T) {
	for _, tc := range []struct {
		typ hub.CredentialType
		msg string
	}{
		{hub.CredentialSSH, "an SSH credential with this fingerprint already exists"},
		{hub.CredentialOpenPGP, "an OpenPGP credential with this fingerprint already exists"},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			refused(is.New(t), credential.DuplicateKey(tc.typ), tc.msg) // 400, as the contract's generate and import say
		})
	}
}
