package keyvault

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// Bounds on SSH keys the vault reads.
const (
	// maxSSHKey bounds an imported key's text: a 16384-bit RSA key in
	// PEM is under 13 KiB.
	maxSSHKey = 16 << 10
	// maxBcryptRounds bounds the KDF rounds of an encrypted OpenSSH key,
	// which the key file chooses: each round costs about 9 ms here, the
	// default is 16 and the common advice (ssh-keygen -a 100) fits.
	maxBcryptRounds = 128
	// minRSABits is the shortest RSA key accepted.
	minRSABits = 2048
)

// The refusals of SSH keys. None quotes its input.
var (
	errSSHNotAKey     = hub.Errorf(hub.Invalid, "the text is not an SSH private key in OpenSSH, PEM or PKCS#8 format")
	errSSHTooLarge    = hub.Errorf(hub.Invalid, "the SSH private key is larger than 16 KiB")
	errSSHTwoKeys     = hub.Errorf(hub.Invalid, "the text holds more than one key; import one at a time")
	errSSHPKCS8Enc    = hub.Errorf(hub.Invalid, "encrypted PKCS#8 keys are not supported; convert the key to OpenSSH format first (ssh-keygen -p -f FILE)")
	errSSHSecurityKey = hub.Errorf(hub.Invalid, "security-key (sk-*) SSH keys are not supported: their secret stays on the hardware key")
	errSSHDSA         = hub.Errorf(hub.Invalid, "DSA keys are not supported; use an ed25519 key")
	errSSHShortRSA    = hub.Errorf(hub.Invalid, "RSA keys shorter than 2048 bits are not supported")
	errSSHKeyType     = hub.Errorf(hub.Invalid, "this type of SSH key is not supported; use ed25519, ECDSA or RSA")
	errSSHCipher      = hub.Errorf(hub.Invalid, "the key is encrypted with a cipher the Hub cannot read; re-encrypt it with ssh-keygen -p -Z aes256-ctr")
	errSSHRounds      = hub.Errorf(hub.Invalid, "the key's passphrase derivation asks for more than 128 rounds; re-encrypt it with ssh-keygen -p -a 100")
	errSSHMismatch    = hub.Errorf(hub.Invalid, "the key is damaged: its public and private halves differ")
	errSSHDamaged     = hub.Errorf(hub.Invalid, "the SSH private key is damaged or incomplete")
	errNeedPassphrase = hub.Errorf(hub.Invalid, "the key is encrypted: its passphrase is required")
	errWrongPass      = hub.Errorf(hub.Invalid, "the passphrase is wrong")
	errWrongOrDamaged = hub.Errorf(hub.Invalid, "the key could not be decrypted: the passphrase is wrong or the key is damaged")
	errEmptyPass      = hub.Errorf(hub.Invalid, "a passphrase is required")
	errComment        = hub.Errorf(hub.Invalid, "the key's comment must be one line of printable text")
)

// GenerateSSH makes an ed25519 key protected by passphrase (hub.KeyVault).
func (v *Vault) GenerateSSH(passphrase []byte, comment string) (hub.NewKey, error) {
	if len(passphrase) == 0 {
		return hub.NewKey{}, errEmptyPass
	}
	if !printable(comment) {
		return hub.NewKey{}, errComment
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the SSH key could not be made")
	}
	defer clear(priv)
	return sshNewKey(priv, comment, passphrase, v)
}

// ImportSSH reads an OpenSSH, PEM or PKCS#8 private key (hub.KeyVault).
// A key imported with a passphrase is stored encrypted with it in
// OpenSSH format (an OpenSSH key already encrypted is kept as it was); a
// key imported without one must be unencrypted and is sealed by the Hub.
func (v *Vault) ImportSSH(privateKey, passphrase []byte) (hub.NewKey, error) {
	if len(privateKey) > maxSSHKey {
		return hub.NewKey{}, errSSHTooLarge
	}
	block, rest := pem.Decode(privateKey)
	if block == nil {
		return hub.NewKey{}, errSSHNotAKey
	}
	defer clear(block.Bytes)
	if bytes.Contains(rest, []byte("-----BEGIN")) {
		return hub.NewKey{}, errSSHTwoKeys
	}
	var header *openSSHHeader
	var encrypted bool
	switch block.Type {
	case "OPENSSH PRIVATE KEY":
		h, err := parseOpenSSHHeader(block.Bytes)
		if err != nil {
			return hub.NewKey{}, err
		}
		header, encrypted = h, h.cipher != "none"
	case "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY":
		encrypted = strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED")
	case "ENCRYPTED PRIVATE KEY":
		return hub.NewKey{}, errSSHPKCS8Enc
	case "DSA PRIVATE KEY":
		return hub.NewKey{}, errSSHDSA
	default:
		return hub.NewKey{}, errSSHNotAKey
	}
	if encrypted && len(passphrase) == 0 {
		return hub.NewKey{}, errNeedPassphrase
	}
	one := pem.EncodeToMemory(block) // the first block alone, as the parsers read it
	defer clear(one)
	var raw any
	var err error
	if encrypted {
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(one, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return hub.NewKey{}, errWrongPass
		}
		if err != nil {
			return hub.NewKey{}, errWrongOrDamaged
		}
	} else if raw, err = ssh.ParseRawPrivateKey(one); err != nil {
		return hub.NewKey{}, errSSHDamaged
	}
	key, err := sshSigner(raw)
	if err != nil {
		return hub.NewKey{}, err
	}
	defer zeroKey(key)
	if header != nil {
		pub, err := ssh.NewPublicKey(key.Public())
		if err != nil || !bytes.Equal(header.publicKey, pub.Marshal()) {
			return hub.NewKey{}, errSSHMismatch
		}
	}
	if encrypted && header != nil {
		// An encrypted OpenSSH key is stored as it came: its own KDF
		// rounds and comment survive.
		sealed, err := v.seal(kindSSHPassphrase, one)
		if err != nil {
			return hub.NewKey{}, err
		}
		return sshKeyRecord(key, "", sealed, true)
	}
	return sshNewKey(key, "", passphrase, v)
}

// sshNewKey seals key: with passphrase in OpenSSH format when there is
// one, else with the Hub's key.
func sshNewKey(key crypto.Signer, comment string, passphrase []byte, v *Vault) (hub.NewKey, error) {
	var sealed []byte
	if len(passphrase) > 0 {
		block, err := ssh.MarshalPrivateKeyWithPassphrase(key, comment, passphrase)
		if err != nil {
			return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the SSH key could not be encrypted")
		}
		if sealed, err = v.seal(kindSSHPassphrase, pem.EncodeToMemory(block)); err != nil {
			return hub.NewKey{}, err
		}
	} else {
		block, err := ssh.MarshalPrivateKey(key, comment)
		if err != nil {
			return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the SSH key could not be encoded")
		}
		plain := pem.EncodeToMemory(block)
		clear(block.Bytes)
		sealed, err = v.seal(kindSSHHub, plain)
		clear(plain)
		if err != nil {
			return hub.NewKey{}, err
		}
	}
	return sshKeyRecord(key, comment, sealed, len(passphrase) > 0)
}

func sshKeyRecord(key crypto.Signer, comment string, sealed []byte, protected bool) (hub.NewKey, error) {
	pub, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the SSH public key could not be encoded")
	}
	line := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n")
	if comment != "" {
		line += " " + comment
	}
	return hub.NewKey{PublicKey: line, Fingerprint: ssh.FingerprintSHA256(pub), Sealed: sealed, Protected: protected}, nil
}

// sshSigner accepts the private keys the vault lends through its agents:
// ed25519 (whole: its public half matches its seed), ECDSA on the NIST
// curves SSH names, and RSA of at least minRSABits.
func sshSigner(raw any) (crypto.Signer, error) {
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		return sshSigner(*k)
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, errSSHDamaged
		}
		if !bytes.Equal(ed25519.NewKeyFromSeed(k.Seed()), k) {
			return nil, errSSHMismatch
		}
		return k, nil
	case *ecdsa.PrivateKey:
		if _, err := ssh.NewPublicKey(&k.PublicKey); err != nil {
			return nil, errSSHKeyType
		}
		return k, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < minRSABits {
			return nil, errSSHShortRSA
		}
		return k, nil
	}
	return nil, errSSHKeyType
}

// unlockSSH opens an SSH key blob.
func (v *Vault) unlockSSH(kind sealKind, sealed, body, passphrase []byte) (*heldKey, error) {
	var raw any
	var err error
	if kind == kindSSHPassphrase {
		if len(passphrase) == 0 {
			return nil, errNeedPassphrase
		}
		inner, oerr := v.open(kind, sealed)
		if oerr != nil {
			return nil, oerr
		}
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(inner, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, errWrongPass
		}
	} else {
		plain, oerr := v.open(kind, sealed)
		if oerr != nil {
			return nil, oerr
		}
		raw, err = ssh.ParseRawPrivateKey(plain)
		clear(plain)
	}
	if err != nil {
		return nil, errSealed
	}
	key, err := sshSigner(raw)
	if err != nil {
		return nil, errSealed
	}
	signer, err := ssh.NewSignerFromSigner(key)
	if err != nil {
		zeroKey(key)
		return nil, errSealed
	}
	return &heldKey{typ: hub.CredentialSSH, raw: key, signer: signer, blob: signer.PublicKey().Marshal()}, nil
}

// openSSHHeader is what an OpenSSH private key says of itself in the
// clear: how it is encrypted, and its public key.
type openSSHHeader struct {
	cipher    string
	publicKey []byte
}

// parseOpenSSHHeader reads the clear part of an "openssh-key-v1"
// container and refuses, before any KDF runs, what the vault will not
// load: security keys, DSA, unknown ciphers or KDFs, too many rounds.
func parseOpenSSHHeader(b []byte) (*openSSHHeader, error) {
	const magic = "openssh-key-v1\x00"
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errSSHNotAKey
	}
	var w struct {
		CipherName, KdfName, KdfOpts string
		NumKeys                      uint32
		PubKey                       []byte
		Rest                         []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(b[len(magic):], &w); err != nil || w.NumKeys != 1 {
		return nil, errSSHDamaged
	}
	var pub struct {
		Type string
		Rest []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(w.PubKey, &pub); err != nil {
		return nil, errSSHDamaged
	}
	switch {
	case strings.HasPrefix(pub.Type, "sk-"):
		return nil, errSSHSecurityKey
	case pub.Type == "ssh-dss":
		return nil, errSSHDSA
	case pub.Type != ssh.KeyAlgoED25519 && pub.Type != ssh.KeyAlgoRSA && pub.Type != ssh.KeyAlgoECDSA256 &&
		pub.Type != ssh.KeyAlgoECDSA384 && pub.Type != ssh.KeyAlgoECDSA521:
		return nil, errSSHKeyType
	}
	switch {
	case w.CipherName == "none" && w.KdfName == "none":
	case w.CipherName != "aes256-ctr" && w.CipherName != "aes256-cbc", w.KdfName != "bcrypt":
		return nil, errSSHCipher
	default:
		var opts struct {
			Salt   string
			Rounds uint32
		}
		if err := ssh.Unmarshal([]byte(w.KdfOpts), &opts); err != nil {
			return nil, errSSHDamaged
		}
		if opts.Rounds > maxBcryptRounds {
			return nil, errSSHRounds
		}
	}
	return &openSSHHeader{cipher: w.CipherName, publicKey: w.PubKey}, nil
}

// printable reports whether s is one line of printable text (empty is).
func printable(s string) bool {
	if len(s) > 1024 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFFFD' {
			return false
		}
	}
	return true
}
