package keyvault

import (
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgparmor "github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/ProtonMail/gopenpgp/v2/armor"
	"github.com/ProtonMail/gopenpgp/v2/constants"
	pgpcrypto "github.com/ProtonMail/gopenpgp/v2/crypto"

	"github.com/wharfhub/wharf/hub"
)

// Bounds on OpenPGP keys the vault reads.
const (
	maxOpenPGPKey = 1 << 20 // the armored text, as the API bounds it
	maxUserID     = 256
	// maxArgon2MemExp and maxArgon2Passes bound the Argon2 S2K a
	// protected key may ask of Unlock: 2^21 KiB (2 GiB, RFC 9580's first
	// recommendation) and 8 passes.
	maxArgon2MemExp = 21
	maxArgon2Passes = 8
)

// The refusals of OpenPGP keys. None quotes its input.
var (
	errPGPNotAKey      = hub.Errorf(hub.Invalid, "the text is not an ASCII-armored OpenPGP private key block")
	errPGPTooLarge     = hub.Errorf(hub.Invalid, "the OpenPGP key is larger than 1 MiB")
	errPGPDamaged      = hub.Errorf(hub.Invalid, "the OpenPGP key is damaged or uses a format the Hub cannot read")
	errPGPNotOne       = hub.Errorf(hub.Invalid, "the block must hold exactly one primary key")
	errPGPPublic       = hub.Errorf(hub.Invalid, "the block holds a public key only; export the secret key (gpg --armor --export-secret-keys)")
	errPGPNoSigner     = hub.Errorf(hub.Invalid, "the key has no secret key able to sign (none, or it is expired or revoked)")
	errPGPCostly       = hub.Errorf(hub.Invalid, "the key's passphrase protection asks for more memory or time than the Hub allows")
	errPGPUserID       = hub.Errorf(hub.Invalid, "the user ID must be a name, optionally followed by <mail@example.com>, in at most 256 bytes")
	errPGPLocked       = hub.Errorf(hub.Unavailable, "the OpenPGP key is locked")
	errPGPNotProtected = hub.Errorf(hub.Internal, "the OpenPGP key could not be protected")
	errPGPBadSignature = hub.Errorf(hub.Invalid, "the OpenPGP signature does not verify with this key")
)

// GenerateOpenPGP makes an ed25519 signing key (with a curve25519
// encryption subkey) for userID, protected by passphrase (hub.KeyVault).
func (v *Vault) GenerateOpenPGP(userID string, passphrase []byte) (hub.NewKey, error) {
	if len(passphrase) == 0 {
		return hub.NewKey{}, errEmptyPass
	}
	name, email, ok := splitUserID(userID)
	if !ok {
		return hub.NewKey{}, errPGPUserID
	}
	key, err := pgpcrypto.GenerateKey(name, email, "x25519", 0)
	if err != nil {
		return hub.NewKey{}, errPGPUserID // the library refuses only names it cannot encode
	}
	defer key.ClearPrivateParams()
	if id := key.GetEntity().PrimaryIdentity(); id == nil || id.Name != userID {
		return hub.NewKey{}, errPGPUserID
	}
	locked, err := key.Lock(passphrase)
	if err != nil {
		return hub.NewKey{}, errPGPNotProtected
	}
	bin, err := locked.Serialize()
	if err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the OpenPGP key could not be encoded")
	}
	sealed, err := v.seal(kindOpenPGPPassphrase, bin)
	if err != nil {
		return hub.NewKey{}, err
	}
	return openPGPRecord(locked.GetEntity(), sealed, true)
}

// ImportOpenPGP reads an armored secret key (hub.KeyVault): exactly one
// primary key whose signing key (the one a signature would use now) has
// its secret. A protected key is stored as it came; an unprotected one is
// sealed by the Hub.
func (v *Vault) ImportOpenPGP(armored []byte) (hub.NewKey, error) {
	if len(armored) > maxOpenPGPKey {
		return hub.NewKey{}, errPGPTooLarge
	}
	in := bytes.NewReader(armored)
	block, err := pgparmor.Decode(in)
	if err != nil || block.Type != openpgp.PrivateKeyType {
		return hub.NewKey{}, errPGPNotAKey
	}
	bin, err := io.ReadAll(block.Body)
	if err != nil {
		clear(bin)
		return hub.NewKey{}, errPGPDamaged
	}
	defer clear(bin)
	if rest, _ := io.ReadAll(in); bytes.Contains(rest, []byte("-----BEGIN")) {
		return hub.NewKey{}, errPGPNotOne
	}
	entity, err := readOneEntity(bin)
	if err != nil {
		return hub.NewKey{}, err
	}
	defer clearEntity(entity)
	if entity.PrivateKey == nil {
		return hub.NewKey{}, errPGPPublic
	}
	signer, ok := entity.SigningKey(v.clock.Now())
	if !ok || signer.PrivateKey == nil || signer.PrivateKey.Dummy() {
		return hub.NewKey{}, errPGPNoSigner
	}
	if protected(entity) {
		if err := boundS2K(bin); err != nil {
			return hub.NewKey{}, err
		}
		sealed, err := v.seal(kindOpenPGPPassphrase, bin)
		if err != nil {
			return hub.NewKey{}, err
		}
		return openPGPRecord(entity, sealed, true)
	}
	sealed, err := v.seal(kindOpenPGPHub, bin)
	if err != nil {
		return hub.NewKey{}, err
	}
	return openPGPRecord(entity, sealed, false)
}

// readOneEntity parses a binary key block holding exactly one key.
func readOneEntity(bin []byte) (*openpgp.Entity, error) {
	list, err := openpgp.ReadKeyRing(bytes.NewReader(bin))
	if err != nil {
		return nil, errPGPDamaged
	}
	if len(list) != 1 {
		for _, e := range list {
			clearEntity(e)
		}
		return nil, errPGPNotOne
	}
	return list[0], nil
}

// protected reports whether any secret of e is encrypted.
func protected(e *openpgp.Entity) bool {
	if e.PrivateKey != nil && !e.PrivateKey.Dummy() && e.PrivateKey.Encrypted {
		return true
	}
	for _, s := range e.Subkeys {
		if s.PrivateKey != nil && !s.PrivateKey.Dummy() && s.PrivateKey.Encrypted {
			return true
		}
	}
	return false
}

func openPGPRecord(e *openpgp.Entity, sealed []byte, protected bool) (hub.NewKey, error) {
	var pub bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the OpenPGP public key could not be encoded")
	}
	armored, err := armor.ArmorWithTypeAndCustomHeaders(pub.Bytes(), constants.PublicKeyHeader, "", "")
	if err != nil {
		return hub.NewKey{}, hub.Wrap(hub.Internal, err, "the OpenPGP public key could not be encoded")
	}
	return hub.NewKey{
		PublicKey:   armored + "\n",
		Fingerprint: strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)),
		Sealed:      sealed,
		Protected:   protected,
	}, nil
}

// unlockOpenPGP opens an OpenPGP key blob.
func (v *Vault) unlockOpenPGP(kind sealKind, sealed, body, passphrase []byte) (*heldKey, error) {
	if kind == kindOpenPGPPassphrase && len(passphrase) == 0 {
		return nil, errNeedPassphrase
	}
	bin, err := v.open(kind, sealed)
	if err != nil {
		return nil, err
	}
	defer clear(bin)
	if kind == kindOpenPGPPassphrase {
		if err := boundS2K(bin); err != nil {
			return nil, errSealed
		}
	}
	entity, err := readOneEntity(bin)
	if err != nil {
		return nil, errSealed
	}
	key, err := pgpcrypto.NewKeyFromEntity(entity)
	if err != nil {
		return nil, errSealed
	}
	if kind == kindOpenPGPPassphrase {
		unlocked, err := key.Unlock(passphrase)
		key.ClearPrivateParams()
		if err != nil {
			return nil, errWrongPass
		}
		key = unlocked
	}
	ring, err := pgpcrypto.NewKeyRing(key)
	if err != nil {
		key.ClearPrivateParams()
		return nil, errSealed
	}
	return &heldKey{typ: hub.CredentialOpenPGP, pgp: key, ring: ring}, nil
}

// SignOpenPGP makes a detached armored signature of data (hub.KeyVault),
// binary mode as gpg -bsa makes for git, with no armor headers.
func (v *Vault) SignOpenPGP(id string, data []byte) ([]byte, error) {
	h := v.lookup(id)
	if h == nil || h.typ != hub.CredentialOpenPGP {
		return nil, errPGPLocked
	}
	var out []byte
	err := h.use(func() error {
		sig, err := h.ring.SignDetached(pgpcrypto.NewPlainMessage(data))
		if err != nil {
			return hub.Wrap(hub.Internal, err, "the OpenPGP signature could not be made")
		}
		armored, err := armor.ArmorWithTypeAndCustomHeaders(sig.GetBinary(), constants.PGPSignatureHeader, "", "")
		if err != nil {
			return hub.Wrap(hub.Internal, err, "the OpenPGP signature could not be encoded")
		}
		out = []byte(armored + "\n")
		return nil
	})
	if err == errLocked {
		return nil, errPGPLocked
	}
	return out, err
}

// VerifyOpenPGP checks a detached signature of data against publicKey
// (hub.KeyVault), bounded like the keys the vault reads.
func (v *Vault) VerifyOpenPGP(publicKey string, data, signature []byte) error {
	if len(publicKey) > maxOpenPGPKey || len(signature) > maxOpenPGPKey {
		return errPGPBadSignature
	}
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(publicKey))
	if err != nil || len(ring) != 1 {
		return errPGPBadSignature
	}
	check := openpgp.CheckDetachedSignature
	if bytes.HasPrefix(bytes.TrimSpace(signature), []byte("-----BEGIN")) {
		check = openpgp.CheckArmoredDetachedSignature
	}
	if _, err := check(ring, bytes.NewReader(data), bytes.NewReader(signature), nil); err != nil {
		return errPGPBadSignature
	}
	return nil
}

// splitUserID splits "Name <mail>" (or "Name", or "<mail>") into the
// parts the library composes a user ID from.
func splitUserID(id string) (name, email string, ok bool) {
	if id == "" || len(id) > maxUserID || !utf8.ValidString(id) || !printable(id) || strings.TrimSpace(id) != id {
		return "", "", false
	}
	if i := strings.LastIndexByte(id, '<'); i >= 0 && strings.HasSuffix(id, ">") {
		name, email = strings.TrimSuffix(id[:i], " "), id[i+1:len(id)-1]
		return name, email, email != "" && !strings.ContainsAny(email, "<> ")
	}
	return id, "", true
}

// clearEntity zeroes the secrets of a parsed key.
func clearEntity(e *openpgp.Entity) {
	if k, err := pgpcrypto.NewKeyFromEntity(e); err == nil && e.PrivateKey != nil {
		k.ClearPrivateParams()
	}
}

// boundS2K refuses a key whose passphrase protection asks for more than
// the Hub allows, before Unlock would run it: the library bounds the
// iterated S2K by its encoding, but lets Argon2 ask for up to 2 TiB.
// It reads each secret key packet's S2K specifier, which follows the
// public key's fields (RFC 9580, 5.5.3).
func boundS2K(bin []byte) error {
	r := packet.NewOpaqueReader(bytes.NewReader(bin))
	for {
		op, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errPGPDamaged
		}
		if op.Tag != 5 && op.Tag != 7 { // secret key, secret subkey
			continue
		}
		p, err := op.Parse()
		pk, ok := p.(*packet.PrivateKey)
		if err != nil || !ok {
			return errPGPDamaged
		}
		if err := boundKeyS2K(&pk.PublicKey, op.Contents); err != nil {
			return err
		}
	}
}

func boundKeyS2K(pub *packet.PublicKey, contents []byte) error {
	var buf bytes.Buffer
	if err := pub.Serialize(&buf); err != nil {
		return errPGPDamaged
	}
	enc := buf.Bytes()
	var n int
	switch l := enc[1]; {
	case l < 192:
		n = 2
	case l < 224:
		n = 3
	case l == 255:
		n = 6
	default:
		return errPGPDamaged
	}
	body := enc[n:]
	if !bytes.HasPrefix(contents, body) {
		return errPGPDamaged
	}
	c := contents[len(body):]
	at := func(i int) (byte, bool) {
		if i < len(c) {
			return c[i], true
		}
		return 0, false
	}
	usage, ok := at(0)
	if !ok {
		return errPGPDamaged
	}
	i := 1
	if pub.Version == 5 || (pub.Version == 6 && usage != 0) {
		i++ // count of the optional fields
	}
	if usage != 253 && usage != 254 && usage != 255 {
		return nil // unprotected, or a form the library refuses itself
	}
	i++ // cipher
	if usage == 253 {
		i++ // AEAD mode
	}
	if pub.Version == 6 {
		i++ // length of the S2K specifier
	}
	mode, ok := at(i)
	if !ok || mode != 4 { // 4: Argon2
		return nil
	}
	passes, ok1 := at(i + 17)
	memExp, ok2 := at(i + 19)
	if !ok1 || !ok2 {
		return errPGPDamaged
	}
	if memExp > maxArgon2MemExp || passes > maxArgon2Passes {
		return errPGPCostly
	}
	return nil
}
