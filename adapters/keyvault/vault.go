// Package keyvault implements hub.KeyVault in process, with no external
// key tool: SSH keys through golang.org/x/crypto/ssh, OpenPGP keys
// through github.com/ProtonMail/gopenpgp/v2, and one SSH agent per
// workspace session through golang.org/x/crypto/ssh/agent.
//
// At rest. The vault keeps no files of keys: it hands each secret back
// sealed (seal.go says the format) and the Hub stores it beside the
// credential's record. A key its owner protected stays encrypted with the
// owner's passphrase in its own format (OpenSSH's bcrypt KDF, OpenPGP's
// S2K); everything else (an unprotected key, a token) is encrypted with
// the Hub's key, 32 random bytes in a 0600 file the vault makes in the
// private state directory at first use and reads strictly. A copy of the
// database alone therefore reveals no token and no unprotected key.
//
// In memory. Unlock decrypts a key into the vault's memory and nowhere
// else; Lock drops it and zeroes what the key types let us reach (the
// standard library keeps internal forms of RSA and ECDSA keys until they
// are collected). A signature in progress finishes before its key is
// zeroed; no signature starts after Lock returns.
//
// Agents. Each workspace session gets its own agent on a 0600 socket in
// its private runtime folder. The agent holds no keys: at each request it
// asks the vault for the unlocked keys among the credentials it offers,
// so Lock and Offer take effect on the live socket at once. It never adds,
// removes, exports or locks keys, reads each request whole and bounded
// before the agent library parses it, and asks AgentOptions.OnUse, bounded
// in time, before every signature, telling a Git signature (the SSHSIG
// preamble) from a login. No ssh-agent or ssh-add process runs and no
// passphrase crosses a process boundary.
package keyvault

import (
	"crypto"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"math/big"
	"path/filepath"
	"sync"
	"time"

	pgpcrypto "github.com/ProtonMail/gopenpgp/v2/crypto"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.KeyVault = (*Vault)(nil)

// DefaultUseTimeout bounds each AgentOptions.OnUse call unless Options
// say otherwise: long enough for the owner to answer an approval on the
// dashboard, short enough that a forgotten request fails.
const DefaultUseTimeout = 2 * time.Minute

// Options configure a Vault.
type Options struct {
	// KeyFile is the Hub's key file: an absolute path in the private
	// state directory. The vault makes it at first use.
	KeyFile string
	// Clock stamps each use an agent reports; nil is the system clock.
	Clock hub.Clock
	// UseTimeout bounds each OnUse call; 0 is DefaultUseTimeout.
	UseTimeout time.Duration
}

// Vault is the in-process hub.KeyVault.
type Vault struct {
	keyFile    string
	clock      hub.Clock
	useTimeout time.Duration

	keyMu sync.Mutex
	aead  cipher.AEAD // the Hub's key, once read

	mu   sync.RWMutex
	held map[string]*heldKey // by credential id
}

// New returns a Vault. It touches no file: the key file is read (or made)
// the first time a secret is sealed or opened with it.
func New(opts Options) (*Vault, error) {
	if !filepath.IsAbs(opts.KeyFile) {
		return nil, errors.New("keyvault: the key file's path must be absolute")
	}
	v := &Vault{keyFile: opts.KeyFile, clock: opts.Clock, useTimeout: opts.UseTimeout, held: map[string]*heldKey{}}
	if v.clock == nil {
		v.clock = hub.SystemClock{}
	}
	if v.useTimeout <= 0 {
		v.useTimeout = DefaultUseTimeout
	}
	return v, nil
}

// heldKey is one unlocked key. Its secret is read under mu's read lock
// and zeroed under its write lock, so a signature in progress finishes
// first and none starts after.
type heldKey struct {
	typ hub.CredentialType

	mu      sync.RWMutex
	dropped bool

	// ssh
	raw    crypto.Signer
	signer ssh.Signer
	blob   []byte // the public key in SSH wire form

	// openpgp
	pgp  *pgpcrypto.Key
	ring *pgpcrypto.KeyRing
}

// errLocked answers a use of a key that is not (or no longer) unlocked.
var errLocked = errors.New("the key is locked")

// use runs f with the key's secret, unless the key was dropped.
func (h *heldKey) use(f func() error) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.dropped {
		return errLocked
	}
	return f()
}

// drop zeroes the secret once no signature uses it.
func (h *heldKey) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dropped {
		return
	}
	h.dropped = true
	if h.raw != nil {
		zeroKey(h.raw)
	}
	if h.pgp != nil {
		h.pgp.ClearPrivateParams()
	}
	h.raw, h.signer, h.pgp, h.ring = nil, nil, nil, nil
}

// Unlock opens credential id's sealed key and holds it (hub.KeyVault).
func (v *Vault) Unlock(id string, t hub.CredentialType, sealed, passphrase []byte) error {
	kind, body, err := splitSealed(sealed)
	if err != nil {
		return err
	}
	if t == hub.CredentialToken || kind == kindToken {
		if t == kind.credentialType() {
			return hub.Errorf(hub.Invalid, "a token has no key to unlock")
		}
		return errSealed
	}
	if kind.credentialType() != t {
		return errSealed
	}
	var h *heldKey
	switch kind {
	case kindSSHPassphrase, kindSSHHub:
		h, err = v.unlockSSH(kind, sealed, body, passphrase)
	default:
		h, err = v.unlockOpenPGP(kind, sealed, body, passphrase)
	}
	if err != nil {
		return err
	}
	v.mu.Lock()
	old := v.held[id]
	v.held[id] = h
	v.mu.Unlock()
	if old != nil {
		old.drop()
	}
	return nil
}

// Lock drops credential id's key (hub.KeyVault).
func (v *Vault) Lock(id string) {
	v.mu.Lock()
	h := v.held[id]
	delete(v.held, id)
	v.mu.Unlock()
	if h != nil {
		h.drop()
	}
}

// Unlocked reports whether credential id's key is held (hub.KeyVault).
func (v *Vault) Unlocked(id string) bool { return v.lookup(id) != nil }

func (v *Vault) lookup(id string) *heldKey {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.held[id]
}

// maxToken bounds a token's value, as the API does.
const maxToken = 64 << 10

// SealToken seals a token with the Hub's key (hub.KeyVault).
func (v *Vault) SealToken(token []byte) ([]byte, error) {
	if len(token) == 0 || len(token) > maxToken {
		return nil, hub.Errorf(hub.Invalid, "a token must hold 1 to %d bytes", maxToken)
	}
	return v.seal(kindToken, token)
}

// OpenToken opens a sealed token (hub.KeyVault).
func (v *Vault) OpenToken(sealed []byte) ([]byte, error) { return v.open(kindToken, sealed) }

// zeroKey overwrites what it can reach of a private key's secret: an
// ed25519 key's bytes, an RSA key's exponent and primes. An ECDSA key's
// secret lives in the standard library's internal form, out of reach.
func zeroKey(k crypto.Signer) {
	switch k := k.(type) {
	case ed25519.PrivateKey:
		clear(k)
	case *rsa.PrivateKey:
		zeroBig(k.D)
		for _, p := range k.Primes {
			zeroBig(p)
		}
		zeroBig(k.Precomputed.Dp)
		zeroBig(k.Precomputed.Dq)
		zeroBig(k.Precomputed.Qinv)
	}
}

func zeroBig(n *big.Int) {
	if n != nil {
		clear(n.Bits())
	}
}
