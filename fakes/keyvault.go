package fakes

import (
	"bytes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.KeyVault = (*KeyVault)(nil)

// KeyVault is a hub.KeyVault for tests. Its refusals say what the real
// vault's say, word for word, so a test through it pins the texts people
// read. It is deterministic: keys come
// from a seeded source, its Hub key is fixed and in memory, and times
// come from its clock. It is quick: a protected key is sealed beside a
// digest of its passphrase instead of under a slow KDF (an imported
// OpenPGP key keeps its own protection). It reads the same key formats as
// the real vault through the same libraries, and serves real agent
// sockets (keyvault_agent.go), so clients can talk to it. Safe for
// concurrent use.
type KeyVault struct {
	clock hub.Clock
	aead  cipher.AEAD

	mu   sync.Mutex
	rand *rand.ChaCha8
	held map[string]*vaultKey
}

// vaultKey is one unlocked key.
type vaultKey struct {
	typ    hub.CredentialType
	signer ssh.Signer // ssh
	blob   []byte
	entity *openpgp.Entity // openpgp
}

// NewKeyVault returns an empty KeyVault on clock.
func NewKeyVault(clock hub.Clock) *KeyVault {
	aead, err := chacha20poly1305.NewX(bytes.Repeat([]byte{0x42}, chacha20poly1305.KeySize))
	if err != nil {
		panic(err)
	}
	return &KeyVault{clock: clock, aead: aead, rand: rand.NewChaCha8([32]byte{'w', 'h', 'a', 'r', 'f'}), held: map[string]*vaultKey{}}
}

// The fake's blob kinds: what the sealed plaintext holds.
const (
	fakeSSH       byte = 's' // an unencrypted OpenSSH key
	fakeOpenPGP   byte = 'p' // an unprotected binary OpenPGP key
	fakeOpenPGPPW byte = 'P' // a binary OpenPGP key under its own protection
	fakeToken     byte = 't'
)

func invalid(msg string) error { return hub.Errorf(hub.Invalid, "%s", msg) }

var errFakeSealed = hub.Errorf(hub.Internal, "a stored secret is damaged or was not sealed by this Hub")

// seal makes a blob: 'F', kind, nonce, then the sealed digest of the
// passphrase (zeros without one) followed by the secret.
func (v *KeyVault) seal(kind byte, passphrase, secret []byte) []byte {
	var digest [32]byte
	if len(passphrase) > 0 {
		digest = sha256.Sum256(passphrase)
	}
	nonce := make([]byte, v.aead.NonceSize())
	v.read(nonce)
	header := []byte{'F', kind}
	out := append([]byte{'F', kind}, nonce...)
	return v.aead.Seal(out, nonce, append(digest[:], secret...), header)
}

// open opens a blob of kind, checking passphrase against its digest.
func (v *KeyVault) open(kind byte, blob, passphrase []byte) ([]byte, error) {
	n := v.aead.NonceSize()
	if len(blob) < 2+n || blob[0] != 'F' || blob[1] != kind {
		return nil, errFakeSealed
	}
	plain, err := v.aead.Open(nil, blob[2:2+n], blob[2+n:], blob[:2])
	if err != nil {
		return nil, errFakeSealed
	}
	digest, secret := plain[:32], plain[32:]
	if bytes.Equal(digest, make([]byte, 32)) {
		return secret, nil
	}
	if len(passphrase) == 0 {
		return nil, invalid("a passphrase is required")
	}
	if want := sha256.Sum256(passphrase); subtle.ConstantTimeCompare(digest, want[:]) != 1 {
		return nil, invalid("the passphrase is wrong")
	}
	return secret, nil
}

func (v *KeyVault) read(p []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, _ = v.rand.Read(p)
}

// GenerateSSH makes the next ed25519 key of the vault's seeded source.
func (v *KeyVault) GenerateSSH(passphrase []byte, comment string) (hub.NewKey, error) {
	if len(passphrase) == 0 {
		return hub.NewKey{}, invalid("a passphrase is required")
	}
	seed := make([]byte, ed25519.SeedSize)
	v.read(seed)
	return v.sealSSH(ed25519.NewKeyFromSeed(seed), comment, passphrase)
}

// ImportSSH reads a key with x/crypto/ssh, as the real vault does.
func (v *KeyVault) ImportSSH(privateKey, passphrase []byte) (hub.NewKey, error) {
	block, rest := pem.Decode(privateKey)
	switch {
	case block == nil:
		return hub.NewKey{}, invalid("the text is not an SSH private key in OpenSSH, PEM or PKCS#8 format")
	case bytes.Contains(rest, []byte("-----BEGIN")):
		return hub.NewKey{}, invalid("the text holds more than one key; import one at a time")
	case block.Type == "ENCRYPTED PRIVATE KEY":
		return hub.NewKey{}, invalid("encrypted PKCS#8 keys are not supported; convert the key to OpenSSH format first (ssh-keygen -p -f FILE)")
	}
	raw, err := ssh.ParseRawPrivateKey(privateKey)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if len(passphrase) == 0 {
			return hub.NewKey{}, invalid("the key is encrypted: its passphrase is required")
		}
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(privateKey, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return hub.NewKey{}, invalid("the passphrase is wrong")
		}
	}
	if err != nil {
		return hub.NewKey{}, invalid("the SSH private key is damaged or incomplete")
	}
	return v.sealSSH(raw, "", passphrase)
}

func (v *KeyVault) sealSSH(raw any, comment string, passphrase []byte) (hub.NewKey, error) {
	signer, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return hub.NewKey{}, invalid("this type of SSH key is not supported; use ed25519, ECDSA or RSA")
	}
	block, err := ssh.MarshalPrivateKey(raw, comment)
	if err != nil {
		return hub.NewKey{}, invalid("this type of SSH key is not supported; use ed25519, ECDSA or RSA")
	}
	line := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(signer.PublicKey())), "\n")
	if comment != "" {
		line += " " + comment
	}
	return hub.NewKey{
		PublicKey:   line,
		Fingerprint: ssh.FingerprintSHA256(signer.PublicKey()),
		Sealed:      v.seal(fakeSSH, passphrase, pem.EncodeToMemory(block)),
		Protected:   len(passphrase) > 0,
	}, nil
}

// GenerateOpenPGP makes an ed25519 OpenPGP key from the seeded source,
// created at the clock's time.
func (v *KeyVault) GenerateOpenPGP(userID string, passphrase []byte) (hub.NewKey, error) {
	if len(passphrase) == 0 {
		return hub.NewKey{}, invalid("a passphrase is required")
	}
	name, email := userID, ""
	if i := strings.LastIndexByte(userID, '<'); i >= 0 && strings.HasSuffix(userID, ">") {
		name, email = strings.TrimSuffix(userID[:i], " "), userID[i+1:len(userID)-1]
	}
	seed := make([]byte, 32)
	v.read(seed)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Rand: rand.NewChaCha8([32]byte(seed)), Time: v.clock.Now}
	e, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil || userID == "" || len(userID) > 256 || e.PrimaryIdentity().Name != userID || strings.ContainsAny(userID, "\x00\r\n") {
		return hub.NewKey{}, invalid("the user ID must be a name, optionally followed by <mail@example.com>, in at most 256 bytes")
	}
	var bin bytes.Buffer
	if err := e.SerializePrivate(&bin, cfg); err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the OpenPGP key could not be encoded")
	}
	return v.openPGPKey(e, v.seal(fakeOpenPGP, passphrase, bin.Bytes()), true)
}

// ImportOpenPGP reads an armored secret key with go-crypto's openpgp.
func (v *KeyVault) ImportOpenPGP(armored []byte) (hub.NewKey, error) {
	block, err := armor.Decode(bytes.NewReader(armored))
	if err != nil || block.Type != openpgp.PrivateKeyType {
		return hub.NewKey{}, invalid("the text is not an ASCII-armored OpenPGP private key block")
	}
	bin, err := io.ReadAll(block.Body)
	if err != nil {
		return hub.NewKey{}, invalid("the OpenPGP key is damaged or uses a format the Hub cannot read")
	}
	list, err := openpgp.ReadKeyRing(bytes.NewReader(bin))
	switch {
	case err != nil:
		return hub.NewKey{}, invalid("the OpenPGP key is damaged or uses a format the Hub cannot read")
	case len(list) != 1:
		return hub.NewKey{}, invalid("the block must hold exactly one primary key")
	case list[0].PrivateKey == nil:
		return hub.NewKey{}, invalid("the block holds a public key only; export the secret key (gpg --armor --export-secret-keys)")
	}
	e := list[0]
	if k, ok := e.SigningKey(v.clock.Now()); !ok || k.PrivateKey == nil || k.PrivateKey.Dummy() {
		return hub.NewKey{}, invalid("the key has no secret key able to sign (none, or it is expired or revoked)")
	}
	if e.PrivateKey.Encrypted {
		return v.openPGPKey(e, v.seal(fakeOpenPGPPW, nil, bin), true)
	}
	return v.openPGPKey(e, v.seal(fakeOpenPGP, nil, bin), false)
}

func (v *KeyVault) openPGPKey(e *openpgp.Entity, sealed []byte, protected bool) (hub.NewKey, error) {
	var pub, out bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the OpenPGP public key could not be encoded")
	}
	w, _ := armor.Encode(&out, openpgp.PublicKeyType, nil)
	w.Write(pub.Bytes())
	w.Close()
	out.WriteByte('\n')
	fp := strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
	return hub.NewKey{PublicKey: out.String(), Fingerprint: fp, Sealed: sealed, Protected: protected}, nil
}

// SealToken seals a token with the fake's Hub key.
func (v *KeyVault) SealToken(token []byte) ([]byte, error) {
	if len(token) == 0 {
		return nil, invalid("a token must not be empty")
	}
	return v.seal(fakeToken, nil, token), nil
}

// OpenToken opens a sealed token.
func (v *KeyVault) OpenToken(sealed []byte) ([]byte, error) { return v.open(fakeToken, sealed, nil) }

// Unlock opens a sealed key into memory.
func (v *KeyVault) Unlock(id string, t hub.CredentialType, sealed, passphrase []byte) error {
	var k *vaultKey
	var err error
	switch t {
	case hub.CredentialSSH:
		k, err = v.unlockSSH(sealed, passphrase)
	case hub.CredentialOpenPGP:
		k, err = v.unlockOpenPGP(sealed, passphrase)
	default:
		return invalid("a token has no key to unlock")
	}
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.held[id] = k
	v.mu.Unlock()
	return nil
}

func (v *KeyVault) unlockSSH(sealed, passphrase []byte) (*vaultKey, error) {
	plain, err := v.open(fakeSSH, sealed, passphrase)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(plain)
	if err != nil {
		return nil, errFakeSealed
	}
	return &vaultKey{typ: hub.CredentialSSH, signer: signer, blob: signer.PublicKey().Marshal()}, nil
}

func (v *KeyVault) unlockOpenPGP(sealed, passphrase []byte) (*vaultKey, error) {
	native := len(sealed) > 1 && sealed[1] == fakeOpenPGPPW
	kind := fakeOpenPGP
	if native {
		kind = fakeOpenPGPPW
	}
	plain, err := v.open(kind, sealed, passphrase)
	if err != nil {
		return nil, err
	}
	list, err := openpgp.ReadKeyRing(bytes.NewReader(plain))
	if err != nil || len(list) != 1 {
		return nil, errFakeSealed
	}
	if native {
		if len(passphrase) == 0 {
			return nil, invalid("a passphrase is required")
		}
		if err := list[0].DecryptPrivateKeys(passphrase); err != nil {
			return nil, invalid("the passphrase is wrong")
		}
	}
	return &vaultKey{typ: hub.CredentialOpenPGP, entity: list[0]}, nil
}

// Lock drops a key.
func (v *KeyVault) Lock(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.held, id)
}

// Unlocked reports whether a key is held.
func (v *KeyVault) Unlocked(id string) bool { return v.key(id) != nil }

func (v *KeyVault) key(id string) *vaultKey {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.held[id]
}

// SignOpenPGP signs with go-crypto's openpgp at the clock's time.
func (v *KeyVault) SignOpenPGP(id string, data []byte) ([]byte, error) {
	k := v.key(id)
	if k == nil || k.typ != hub.CredentialOpenPGP {
		return nil, hub.Errorf(hub.Unavailable, "the OpenPGP key is locked")
	}
	var out bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&out, k.entity, bytes.NewReader(data), &packet.Config{Time: v.clock.Now}); err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the OpenPGP signature could not be made")
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// VerifyOpenPGP checks a detached signature as the real vault does.
func (v *KeyVault) VerifyOpenPGP(publicKey string, data, signature []byte) error {
	bad := hub.Errorf(hub.Invalid, "the OpenPGP signature does not verify with this key")
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(publicKey))
	if err != nil || len(ring) != 1 {
		return bad
	}
	check := openpgp.CheckDetachedSignature
	if bytes.HasPrefix(bytes.TrimSpace(signature), []byte("-----BEGIN")) {
		check = openpgp.CheckArmoredDetachedSignature
	}
	if _, err := check(ring, bytes.NewReader(data), bytes.NewReader(signature), nil); err != nil {
		return bad
	}
	return nil
}
