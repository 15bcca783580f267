package keyvault_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/hub"
)

// openSSHContainer builds an "openssh-key-v1" key as PROTOCOL.key lays
// it out, with the given header and an opaque private section.
func openSSHContainer(cipher, kdf string, kdfOpts, pub, private []byte) []byte {
	body := append([]byte("openssh-key-v1\x00"), ssh.Marshal(struct {
		CipherName, KdfName, KdfOpts string
		NumKeys                      uint32
		PubKey, PrivKeyBlock         []byte
	}{cipher, kdf, string(kdfOpts), 1, pub, private})...)
	return pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: body})
}

func bcryptOpts(rounds uint32) []byte {
	return ssh.Marshal(struct {
		Salt   string
		Rounds uint32
	}{"0123456789abcdef", rounds})
}

func seedKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func TestSSHKeysTheVaultWillNotLoadAreRefusedWithAReason(t *testing.T) {
	a, b := seedKey(1), seedKey(2)
	pubA, _ := ssh.NewPublicKey(a.Public())
	pubB, _ := ssh.NewPublicKey(b.Public())
	plainA, err := ssh.MarshalPrivateKey(a, "")
	if err != nil {
		t.Fatal(err)
	}
	// A key whose clear header names another public key than its secret.
	swappedHeader := bytes.Replace(plainA.Bytes, pubA.Marshal(), pubB.Marshal(), 1)
	// A key whose secret seed does not make its public half.
	badHalves := bytes.ReplaceAll(plainA.Bytes, []byte(a.Public().(ed25519.PublicKey)), []byte(b.Public().(ed25519.PublicKey)))
	short, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	skPub := ssh.Marshal(struct {
		Type, Application string
		Key               []byte
	}{"sk-ssh-ed25519@openssh.com", "ssh:", make([]byte, 32)})
	dssPub := ssh.Marshal(struct{ Type string }{"ssh-dss"})
	for _, c := range []struct {
		name      string
		key, pass []byte
		message   string
	}{
		{"ASecurityKey", openSSHContainer("none", "none", nil, skPub, make([]byte, 64)), nil,
			"security-key (sk-*) SSH keys are not supported: their secret stays on the hardware key"},
		{"AnEncryptedSecurityKey", openSSHContainer("aes256-ctr", "bcrypt", bcryptOpts(16), skPub, make([]byte, 64)), []byte("pass"),
			"security-key (sk-*) SSH keys are not supported: their secret stays on the hardware key"},
		{"AnOpenSSHDSAKey", openSSHContainer("none", "none", nil, dssPub, make([]byte, 64)), nil, "DSA keys are not supported; use an ed25519 key"},
		{"APEMDSAKey", pem.EncodeToMemory(&pem.Block{Type: "DSA PRIVATE KEY", Bytes: []byte{0x30, 0}}), nil, "DSA keys are not supported; use an ed25519 key"},
		{"TooManyKDFRounds", openSSHContainer("aes256-ctr", "bcrypt", bcryptOpts(1<<20), pubA.Marshal(), make([]byte, 64)), []byte("pass"),
			"the key's passphrase derivation asks for more than 128 rounds; re-encrypt it with ssh-keygen -p -a 100"},
		{"AnUnknownCipher", openSSHContainer("chacha20-poly1305@openssh.com", "bcrypt", bcryptOpts(16), pubA.Marshal(), make([]byte, 64)), []byte("pass"),
			"the key is encrypted with a cipher the Hub cannot read; re-encrypt it with ssh-keygen -p -Z aes256-ctr"},
		{"AHeaderNamingAnotherKey", pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: swappedHeader}), nil,
			"the key is damaged: its public and private halves differ"},
		{"ASeedNotMakingItsPublicHalf", pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: badHalves}), nil,
			"the key is damaged: its public and private halves differ"},
		{"AShortRSAKey", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(short)}), nil,
			"RSA keys shorter than 2048 bits are not supported"},
		{"EncryptedPKCS8", []byte(encryptedPKCS8), []byte("fixture-pass"),
			"encrypted PKCS#8 keys are not supported; convert the key to OpenSSH format first (ssh-keygen -p -f FILE)"},
		{"AnEncryptedKeyWithoutItsPassphrase", []byte(legacyEncrypted), nil, "the key is encrypted: its passphrase is required"},
		{"AWrongPassphrase", []byte(legacyEncrypted), []byte("not the passphrase"), "the passphrase is wrong"},
		{"TooLarge", bytes.Repeat([]byte("A"), 16<<10+1), nil, "the SSH private key is larger than 16 KiB"},
		{"NotAKey", []byte("ssh-ed25519 AAAA not a private key"), nil,
			"the text is not an SSH private key in OpenSSH, PEM or PKCS#8 format"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			k, err := newVault(t).ImportSSH(c.key, c.pass)
			is.Equal(hub.KindOf(err), hub.Invalid)  // refused as invalid input
			is.Equal(hub.MessageOf(err), c.message) // saying why
			is.Equal(k.Sealed, nil)                 // sealing nothing
		})
	}
}

func TestALegacyEncryptedPEMKeyIsReEncryptedInOpenSSHFormat(t *testing.T) {
	is := is.New(t)
	v := newVault(t)
	k, err := v.ImportSSH([]byte(legacyEncrypted), []byte("fixture-pass"))
	is.NoErr(err)                                             // imported
	is.True(k.Protected)                                      // protected
	is.True(!bytes.Contains(k.Sealed, []byte("PRIVATE KEY"))) // sealed: no key text shows
	inner, err := keyvault.OpenSealed(v, k.Sealed)
	is.NoErr(err)                                                       // the Hub's seal opens
	is.True(bytes.Contains(inner, []byte("BEGIN OPENSSH PRIVATE KEY"))) // onto OpenSSH format
	is.True(!bytes.Contains(inner, []byte("Proc-Type")))                // not as it came
	_, err = ssh.ParseRawPrivateKey(inner)
	_, missing := err.(*ssh.PassphraseMissingError)
	is.True(missing)                                                             // encrypted
	is.NoErr(v.Unlock("l", hub.CredentialSSH, k.Sealed, []byte("fixture-pass"))) // with the same passphrase
}

func TestAnEncryptedOpenSSHKeyIsKeptAsItCame(t *testing.T) {
	is := is.New(t)
	a := seedKey(3)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(a, "my laptop", []byte("pass"))
	is.NoErr(err)
	text := pem.EncodeToMemory(block)
	v := newVault(t)
	k, err := v.ImportSSH(append([]byte("\n"), text...), []byte("pass"))
	is.NoErr(err)                            // imported
	is.True(!bytes.Contains(k.Sealed, text)) // sealed over its own encryption
	inner, err := keyvault.OpenSealed(v, k.Sealed)
	is.NoErr(err)                         // which the Hub's key opens
	is.Equal(string(inner), string(text)) // byte for byte: its KDF rounds and comment survive
}

func TestAGeneratedKeyRefusesACommentThatBreaksItsLine(t *testing.T) {
	is := is.New(t)
	_, err := newVault(t).GenerateSSH([]byte("pass"), "a\nssh-ed25519 AAAA evil")
	is.Equal(hub.MessageOf(err), "the key's comment must be one line of printable text") // refused
}

func TestMessagesNeverQuoteTheKeyOrThePassphrase(t *testing.T) {
	is := is.New(t)
	secret := "SECRETSECRETSECRET"
	v := newVault(t)
	for _, key := range []string{
		"-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n-----END OPENSSH PRIVATE KEY-----\n",
		"-----BEGIN RSA PRIVATE KEY-----\n" + secret + "\n-----END RSA PRIVATE KEY-----\n",
		secret,
	} {
		_, err := v.ImportSSH([]byte(key), []byte(secret+"pass"))
		is.True(err != nil)                             // refused
		is.True(!strings.Contains(err.Error(), secret)) // without quoting either
		_, err = v.ImportOpenPGP([]byte(key))
		is.True(err != nil && !strings.Contains(err.Error(), secret)) // the same for OpenPGP
	}
}

// legacyEncrypted is a P-256 key in OpenSSL's legacy encrypted PEM and
// encryptedPKCS8 the same as encrypted PKCS#8, both with the passphrase
// "fixture-pass" (made with openssl ec -aes256 and openssl pkcs8 -topk8).
const (
	legacyEncrypted = `-----BEGIN EC PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-256-CBC,D3282560E931E0151F8135EFC3F0983B

OXlq4oIiAoIzY2PReUfSmJ+hnm2vWeCnN6bwlF0flE6wNuB2CpeLoOQZbbexqDTS
k/u+sf17z+xalDEiwshu/ff7LEfGHKeXEYRyRHQx03ZBgMJSwIdSyIMQOlCT1IKS
zH1Wcpd39VYCoCMNiVklzdBAgvaiGD0Ysch79cjt5rQ=
-----END EC PRIVATE KEY-----
`
	encryptedPKCS8 = `-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgheuMcG0pAqQICCAAw
DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFCJEFyEmXOgXowGGb0qAlwEgZCj
lFWB/5IriQYJ8iXjRtD+29ASWfCDTvTnbTrESCmrAXlM4u1mpaDo6eYK0wLfL7Rs
jkQfYoFFeh9h8buab6Q6UCbnKkXw+Q62kQdSx8yKv8Wjvg6oJLcMCC+TeGDRt+Zb
t9XqzInp5tJhSF76yFnusXerO+mCj4eS2N4KLjppt+CB1IVv027r0JGgX2uWRqw=
-----END ENCRYPTED PRIVATE KEY-----
`
)

// seedOpenSSH returns seedKey(b) as an unencrypted OpenSSH key.
func seedOpenSSH(t *testing.T, b byte) []byte {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(seedKey(b), "")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block)
}
