package porttest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// The KeyVault suite's key material, made once per test binary (an RSA
// key and a bcrypt KDF take a moment under the race detector).

// fixturePass is the passphrase of every protected fixture.
const fixturePass = "fixture-pass"

// legacyEncryptedEC is a P-256 key in OpenSSL's legacy encrypted PEM
// (Proc-Type: 4,ENCRYPTED), passphrase fixturePass, made with
// `openssl ec -aes256`; pkcs8EncryptedEC is the same key as encrypted
// PKCS#8 (`openssl pkcs8 -topk8 -v2 aes256`), which the vault refuses.
const (
	legacyEncryptedEC = `-----BEGIN EC PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-256-CBC,D3282560E931E0151F8135EFC3F0983B

OXlq4oIiAoIzY2PReUfSmJ+hnm2vWeCnN6bwlF0flE6wNuB2CpeLoOQZbbexqDTS
k/u+sf17z+xalDEiwshu/ff7LEfGHKeXEYRyRHQx03ZBgMJSwIdSyIMQOlCT1IKS
zH1Wcpd39VYCoCMNiVklzdBAgvaiGD0Ysch79cjt5rQ=
-----END EC PRIVATE KEY-----
`
	legacyEncryptedECPublic = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBAzJVQnuKakT36FG0SsJPE3ISxtVNnHayLoKDms0UKcaa+M/cE0s9HS2VBSK1DyF/hl+3T8x9oTSEalY2wAIkAc="
	pkcs8EncryptedEC        = `-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgheuMcG0pAqQICCAAw
DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEFCJEFyEmXOgXowGGb0qAlwEgZCj
lFWB/5IriQYJ8iXjRtD+29ASWfCDTvTnbTrESCmrAXlM4u1mpaDo6eYK0wLfL7Rs
jkQfYoFFeh9h8buab6Q6UCbnKkXw+Q62kQdSx8yKv8Wjvg6oJLcMCC+TeGDRt+Zb
t9XqzInp5tJhSF76yFnusXerO+mCj4eS2N4KLjppt+CB1IVv027r0JGgX2uWRqw=
-----END ENCRYPTED PRIVATE KEY-----
`
)

// sshFixture is one private key in the encodings the suite imports.
type sshFixture struct {
	Key                 crypto.Signer
	Public              ssh.PublicKey
	OpenSSH, OpenSSHEnc []byte // OpenSSH format, plain and (key A only) encrypted with fixturePass
	PKCS8               []byte // PKCS#8 "PRIVATE KEY"
	Native              []byte // PKCS#1 for RSA, SEC1 for ECDSA, nil for ed25519
}

var (
	fixturesOnce sync.Once
	fixtures     struct {
		EdA, EdB, RSA, EC sshFixture
		err               error
	}
)

// SSHFixtures returns the suite's SSH keys: two ed25519 keys (A from a
// fixed seed, B random), an RSA 2048 key and a P-256 key.
func sshFixtures(t *testing.T) (a, b, rsaKey, ec sshFixture) {
	t.Helper()
	fixturesOnce.Do(func() {
		var err error
		seed := bytes.Repeat([]byte{0x5a}, ed25519.SeedSize)
		a := ed25519.NewKeyFromSeed(seed)
		if fixtures.EdA, err = newSSHFixture(a); err != nil {
			fixtures.err = err
			return
		}
		// One encrypted key is enough: a bcrypt KDF is slow under the
		// race detector.
		block, err := ssh.MarshalPrivateKeyWithPassphrase(a, "fixture", []byte(fixturePass))
		if err != nil {
			fixtures.err = err
			return
		}
		fixtures.EdA.OpenSSHEnc = pem.EncodeToMemory(block)
		_, edB, _ := ed25519.GenerateKey(rand.Reader)
		if fixtures.EdB, err = newSSHFixture(edB); err != nil {
			fixtures.err = err
			return
		}
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			fixtures.err = err
			return
		}
		if fixtures.RSA, err = newSSHFixture(rk); err != nil {
			fixtures.err = err
			return
		}
		ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			fixtures.err = err
			return
		}
		fixtures.EC, fixtures.err = newSSHFixture(ek)
	})
	if fixtures.err != nil {
		t.Fatalf("making SSH fixtures: %v", fixtures.err)
	}
	return fixtures.EdA, fixtures.EdB, fixtures.RSA, fixtures.EC
}

func newSSHFixture(k crypto.Signer) (sshFixture, error) {
	f := sshFixture{Key: k}
	var err error
	if f.Public, err = ssh.NewPublicKey(k.Public()); err != nil {
		return f, err
	}
	block, err := ssh.MarshalPrivateKey(k, "fixture")
	if err != nil {
		return f, err
	}
	f.OpenSSH = pem.EncodeToMemory(block)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return f, err
	}
	f.PKCS8 = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	switch k := k.(type) {
	case *rsa.PrivateKey:
		f.Native = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return f, err
		}
		f.Native = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	return f, nil
}

// pgpFixture is an OpenPGP key armored plain and protected.
type pgpFixture struct {
	Fingerprint      string // upper-case hex
	Plain, Protected []byte // armored secret key blocks
	Public           []byte // armored public key block
	TwoKeys, Damaged []byte // two keys in one block; a block cut short
}

var (
	pgpOnce sync.Once
	pgpFix  pgpFixture
	pgpErr  error
)

// openPGPFixture returns an ed25519 OpenPGP key made for the suite.
func openPGPFixture(t *testing.T) pgpFixture {
	t.Helper()
	pgpOnce.Do(func() { pgpFix, pgpErr = newPGPFixture() })
	if pgpErr != nil {
		t.Fatalf("making the OpenPGP fixture: %v", pgpErr)
	}
	return pgpFix
}

func newPGPFixture() (pgpFixture, error) {
	var f pgpFixture
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return time.Unix(1_700_000_000, 0) }}
	e, err := openpgp.NewEntity("Fixture", "", "fixture@example.com", cfg)
	if err != nil {
		return f, err
	}
	f.Fingerprint = strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
	var plain, public, twice bytes.Buffer
	if err := e.SerializePrivate(&plain, cfg); err != nil {
		return f, err
	}
	if err := e.Serialize(&public); err != nil {
		return f, err
	}
	twice.Write(plain.Bytes())
	twice.Write(plain.Bytes())
	if f.Plain, err = armored(openpgp.PrivateKeyType, plain.Bytes()); err != nil {
		return f, err
	}
	if f.Public, err = armored(openpgp.PublicKeyType, public.Bytes()); err != nil {
		return f, err
	}
	if f.TwoKeys, err = armored(openpgp.PrivateKeyType, twice.Bytes()); err != nil {
		return f, err
	}
	damaged := bytes.Clone(plain.Bytes())
	damaged = damaged[:len(damaged)/2]
	if f.Damaged, err = armored(openpgp.PrivateKeyType, damaged); err != nil {
		return f, err
	}
	if err := e.EncryptPrivateKeys([]byte(fixturePass), cfg); err != nil {
		return f, err
	}
	var prot bytes.Buffer
	if err := e.SerializePrivateWithoutSigning(&prot, cfg); err != nil {
		return f, err
	}
	f.Protected, err = armored(openpgp.PrivateKeyType, prot.Bytes())
	return f, err
}

func armored(blockType string, b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := armor.Encode(&out, blockType, nil)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// verifyOpenPGP checks an armored detached signature of data against an
// armored public key.
func verifyOpenPGP(publicKey string, data, sig []byte) error {
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(publicKey))
	if err != nil {
		return err
	}
	_, err = openpgp.CheckArmoredDetachedSignature(ring, bytes.NewReader(data), bytes.NewReader(sig), nil)
	return err
}

// agentDir makes a private folder short enough for a socket path.
func agentDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// isInvalid reports whether err is an Invalid hub.Error whose message
// quotes none of secrets.
func isInvalid(err error, secrets ...[]byte) bool {
	var e *hub.Error
	if !errors.As(err, &e) || e.Kind != hub.Invalid || e.Message == "" {
		return false
	}
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(err.Error(), string(s)) {
			return false
		}
	}
	return true
}

func openpgpRing(armored string) (openpgp.EntityList, error) {
	return openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
}
