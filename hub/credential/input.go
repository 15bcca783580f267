package credential

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// The bounds of what credential requests carry (api/openapi.yaml), in
// UTF-8 bytes. A private key is bounded by the request body limit, which
// the transport applies.
const (
	MaxNameBytes       = 256   // CredentialName
	MaxPassphraseBytes = 4096  // every passphrase field
	MaxUserIDBytes     = 256   // GenerateOpenPgpCredentialRequest.userId
	MaxUsernameBytes   = 256   // CreateTokenCredentialRequest.username
	MaxTokenBytes      = 65536 // CreateTokenCredentialRequest.token
	MaxIDBytes         = 128   // CredentialId
)

// DefaultUsername is the user name a token is sent with when its record
// names none (a token's own user name is optional).
const DefaultUsername = "oauth2"

var (
	errID               = hub.Errorf(hub.Invalid, "credential id is invalid")
	errNameLong         = hub.Errorf(hub.Invalid, "credential name must be at most %d bytes", MaxNameBytes)
	errPassphraseEmpty  = hub.Errorf(hub.Invalid, "passphrase must be a non-empty string")
	errPassphraseLong   = hub.Errorf(hub.Invalid, "passphrase must be at most %d bytes", MaxPassphraseBytes)
	errPassphraseCtl    = hub.Errorf(hub.Invalid, "passphrase must not contain control characters")
	errPassphraseUTF8   = hub.Errorf(hub.Invalid, "passphrase must be valid UTF-8")
	errUserIDLong       = hub.Errorf(hub.Invalid, "OpenPGP user id must be at most %d bytes", MaxUserIDBytes)
	errTokenEmpty       = hub.Errorf(hub.Invalid, "token must be a non-empty string")
	errTokenLong        = hub.Errorf(hub.Invalid, "token must be at most %d bytes", MaxTokenBytes)
	errTokenBreak       = hub.Errorf(hub.Invalid, "token must not contain NUL, CR or LF")
	errTokenUTF8        = hub.Errorf(hub.Invalid, "token must be valid UTF-8")
	errUsernameLong     = hub.Errorf(hub.Invalid, "username must be at most %d bytes", MaxUsernameBytes)
	errUsernameCtl      = hub.Errorf(hub.Invalid, "username must not contain control characters")
	errUsernameUTF8     = hub.Errorf(hub.Invalid, "username must be valid UTF-8")
	errTokenNotUnlocked = hub.Errorf(hub.Invalid, "token credentials cannot be locked or unlocked")
)

// CheckID checks a credential id as a path or a body carries it: 1 to 128
// of [A-Za-z0-9_-] (the CredentialId pattern; the Hub mints UUIDs). A
// malformed id is Invalid ("credential id is invalid"), checked before any
// lookup, so it is never a 404 and never reaches the store.
func CheckID(id string) error {
	if id == "" || len(id) > MaxIDBytes {
		return errID
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isASCIILetter(c) && !isDigit(c) && c != '_' && c != '-' {
			return errID
		}
	}
	return nil
}

// NormalizeName trims a credential's name as clients trim and checks it:
// the rule for names people read (hub.NormalizeVisibleText: a visible
// character, no control or format character), at most 256 bytes. Names
// need not be unique. It returns the stored form.
func NormalizeName(name string) (string, error) {
	name, err := hub.NormalizeVisibleText("credential name", name)
	if err != nil {
		return "", err
	}
	if len(name) > MaxNameBytes {
		return "", errNameLong
	}
	return name, nil
}

// CheckNewPassphrase checks the passphrase a new key is protected with
// (SSH and OpenPGP generate): required and not only white space or
// invisible characters (a passphrase nobody can see is one nobody can
// type again), at most 4096 bytes, no control characters. It is never
// trimmed: every byte is part of it.
func CheckNewPassphrase(p string) error {
	if err := checkPassphrase(p); err != nil {
		return err
	}
	if hub.RemoveInvisible(p) == "" {
		return errPassphraseEmpty
	}
	return nil
}

// CheckPassphrase checks a passphrase that opens a key of type t (unlock,
// and SSH import): at most 4096 bytes, no control characters. An SSH key
// takes an empty one (an unencrypted key needs none; the vault says when
// an encrypted one does); an OpenPGP key needs a non-empty one. A token has
// no passphrase: Invalid "token credentials cannot be locked or unlocked".
func CheckPassphrase(t hub.CredentialType, p string) error {
	switch t {
	case hub.CredentialSSH:
		if p == "" {
			return nil
		}
		return checkPassphrase(p)
	case hub.CredentialOpenPGP:
		if p == "" {
			return errPassphraseEmpty
		}
		return checkPassphrase(p)
	case hub.CredentialToken:
		return errTokenNotUnlocked
	}
	return errType
}

func checkPassphrase(p string) error {
	switch {
	case p == "":
		return errPassphraseEmpty
	case len(p) > MaxPassphraseBytes:
		return errPassphraseLong
	case !utf8.ValidString(p):
		return errPassphraseUTF8
	case hasControl(p):
		return errPassphraseCtl
	}
	return nil
}

// NormalizeUserID trims an OpenPGP user id (free text such as
// "Name <mail@example.com>") and checks it as a name people read, at most
// 256 bytes. It returns the form the key is made with.
func NormalizeUserID(id string) (string, error) {
	id, err := hub.NormalizeVisibleText("OpenPGP user id", id)
	if err != nil {
		return "", err
	}
	if len(id) > MaxUserIDBytes {
		return "", errUserIDLong
	}
	return id, nil
}

// CheckToken checks a token's value: 1 to 65536 bytes of UTF-8 without
// NUL, CR or LF (each would end or split a line of the Git credential
// protocol the token is handed over by). It is never trimmed, and no
// refusal quotes it.
func CheckToken(token string) error {
	switch {
	case token == "":
		return errTokenEmpty
	case len(token) > MaxTokenBytes:
		return errTokenLong
	case strings.ContainsAny(token, "\x00\r\n"):
		return errTokenBreak
	case !utf8.ValidString(token):
		return errTokenUTF8
	}
	return nil
}

// CheckUsername checks the user name a token is sent with: "" is none
// (DefaultUsername is sent), else at most 256 bytes of UTF-8 with no
// control character (a CR or LF would forge a line of the Git credential
// protocol). It is kept as sent.
func CheckUsername(u string) error {
	switch {
	case u == "":
		return nil
	case len(u) > MaxUsernameBytes:
		return errUsernameLong
	case !utf8.ValidString(u):
		return errUsernameUTF8
	case hasControl(u):
		return errUsernameCtl
	}
	return nil
}

// Username is the user name a token credential is sent with.
func Username(c hub.Credential) string {
	if c.Username == "" {
		return DefaultUsername
	}
	return c.Username
}

// DuplicateKey is the refusal of a generated or imported key whose
// fingerprint a credential of the catalog already has (the store refuses
// it as a Conflict; the contract answers 400 for generate and import):
// Invalid "an SSH credential with this fingerprint already exists", or
// "an OpenPGP credential ...".
func DuplicateKey(t hub.CredentialType) error {
	if t == hub.CredentialOpenPGP {
		return errDuplicateOpenPGP
	}
	return errDuplicateSSH
}

var (
	errDuplicateSSH     = hub.Errorf(hub.Invalid, "an SSH credential with this fingerprint already exists")
	errDuplicateOpenPGP = hub.Errorf(hub.Invalid, "an OpenPGP credential with this fingerprint already exists")
)

// hasControl reports a control character (Cc: C0, DEL and C1).
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Cc, r) }) >= 0
}
