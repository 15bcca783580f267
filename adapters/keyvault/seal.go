package keyvault

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/wharfhub/wharf/adapters/internal/keyfile"
	"github.com/wharfhub/wharf/hub"
)

// A sealed secret is [version][kind][body]. The kind says both what the
// secret is and what seals it, so Unlock refuses a token offered as a key
// and never guesses how to open a blob:
//
//	kindSSHPassphrase      body: seal(an OpenSSH private key encrypted with the owner's passphrase (bcrypt KDF))
//	kindOpenPGPPassphrase  body: seal(a binary OpenPGP secret key protected by its own S2K)
//	kindSSHHub             body: seal(an unencrypted OpenSSH private key)
//	kindOpenPGPHub         body: seal(an unprotected binary OpenPGP secret key)
//	kindToken              body: seal(a token's value)
//
// where seal(x) is a 24-byte random nonce followed by XChaCha20-Poly1305
// of x under the Hub's key, with the two header bytes as additional data:
// a blob relabelled to another kind fails to open. A key its owner
// protected is sealed too, over its own encryption: a copy of the store
// alone then holds nothing to guess the passphrase against offline.
const sealVersion = 2

type sealKind byte

const (
	kindSSHPassphrase sealKind = iota + 1
	kindOpenPGPPassphrase
	kindSSHHub
	kindOpenPGPHub
	kindToken
)

// credentialType is the type of credential a kind of blob belongs to.
func (k sealKind) credentialType() hub.CredentialType {
	switch k {
	case kindSSHPassphrase, kindSSHHub:
		return hub.CredentialSSH
	case kindOpenPGPPassphrase, kindOpenPGPHub:
		return hub.CredentialOpenPGP
	}
	return hub.CredentialToken
}

// errSealed is the one answer to a blob the vault did not make or that was
// damaged since: the caller handed it back from its store, so it is not
// the caller's input at fault.
var errSealed = hub.Errorf(hub.Internal, "a stored secret is damaged or was not sealed by this Hub")

// splitSealed reads a blob's header.
func splitSealed(blob []byte) (sealKind, []byte, error) {
	if len(blob) < 2 || blob[0] != sealVersion || blob[1] < byte(kindSSHPassphrase) || blob[1] > byte(kindToken) {
		return 0, nil, errSealed
	}
	return sealKind(blob[1]), blob[2:], nil
}

// seal makes a blob of kind k holding plain, encrypted with the Hub's key.
// The caller zeroes plain.
func (v *Vault) seal(k sealKind, plain []byte) ([]byte, error) {
	aead, err := v.hubAEAD()
	if err != nil {
		return nil, err
	}
	header := []byte{sealVersion, byte(k)}
	out := make([]byte, 0, 2+aead.NonceSize()+len(plain)+aead.Overhead())
	out = append(out, header...)
	nonce := out[2 : 2+aead.NonceSize()]
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the Hub could not seal a secret")
	}
	out = out[:2+len(nonce)]
	return aead.Seal(out, nonce, plain, header), nil
}

// open returns the plain content of a Hub-sealed blob of kind k, in a new
// buffer the caller zeroes when done.
func (v *Vault) open(k sealKind, blob []byte) ([]byte, error) {
	got, body, err := splitSealed(blob)
	if err != nil {
		return nil, err
	}
	if got != k {
		return nil, errSealed
	}
	aead, err := v.hubAEAD()
	if err != nil {
		return nil, err
	}
	if len(body) < aead.NonceSize()+aead.Overhead() {
		return nil, errSealed
	}
	nonce, ct := body[:aead.NonceSize()], body[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, blob[:2])
	if err != nil {
		return nil, errSealed
	}
	return plain, nil
}

// hubKeySize is the size of the Hub's key, and of its file.
const hubKeySize = chacha20poly1305.KeySize

// hubAEAD returns the cipher of the Hub's key, reading its file (or making
// it, the first time) on first use. A failure is not remembered: the next
// call tries again, so an operator can repair the file without a restart.
func (v *Vault) hubAEAD() (cipher.AEAD, error) {
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	if v.aead != nil {
		return v.aead, nil
	}
	key, err := loadOrCreateHubKey(v.keyFile)
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the Hub's key file is unusable")
	}
	defer clear(key)
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the Hub's key file is unusable")
	}
	v.aead = aead
	return aead, nil
}

// loadOrCreateHubKey reads the Hub's key from path, or makes it when
// nothing is there: 32 random bytes written to a fresh 0600 file (O_EXCL)
// beside it, synced, then linked into place, which never replaces a file,
// so two makers agree on one key and a crash never leaves a short key at
// path.
func loadOrCreateHubKey(path string) ([]byte, error) {
	key, err := readHubKey(path)
	if !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	key = make([]byte, hubKeySize)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		return nil, err
	}
	created, err := keyfile.CreateOnce(path, key)
	if err != nil || !created {
		clear(key)
		if err != nil {
			return nil, err
		}
		return readHubKey(path) // another maker won: use its key
	}
	return key, nil
}

// readHubKey reads the key file strictly: a regular file (never through a
// symbolic link), owned by this user, closed to group and others, of
// exactly hubKeySize bytes.
func readHubKey(path string) ([]byte, error) {
	// O_NONBLOCK: a FIFO put at the path would otherwise block the open
	// until a writer came; it is then refused as no regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s is open to group or others (mode %o); it must be 0600", path, fi.Mode().Perm())
	case fi.Size() != hubKeySize:
		return nil, fmt.Errorf("%s holds %d bytes, not %d", path, fi.Size(), hubKeySize)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s is owned by another user", path)
	}
	key := make([]byte, hubKeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		clear(key)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}
