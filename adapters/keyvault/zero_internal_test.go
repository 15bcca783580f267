package keyvault

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestLockZeroesTheSecretsItCanReach(t *testing.T) {
	is := is.New(t)
	v, err := New(Options{KeyFile: filepath.Join(t.TempDir(), "k")})
	is.NoErr(err)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	edDER, err := x509.MarshalPKCS8PrivateKey(ed)
	is.NoErr(err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	is.NoErr(err)
	for id, key := range map[string][]byte{
		"ed":  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: edDER}),
		"rsa": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}),
	} {
		k, err := v.ImportSSH(key, nil)
		is.NoErr(err)
		is.NoErr(v.Unlock(id, hub.CredentialSSH, k.Sealed, nil))
	}
	edHeld := v.lookup("ed").raw.(ed25519.PrivateKey)
	rsaHeld := v.lookup("rsa").raw.(*rsa.PrivateKey)
	v.Lock("ed")
	v.Lock("rsa")
	is.Equal(edHeld, ed25519.PrivateKey(make([]byte, ed25519.PrivateKeySize))) // the ed25519 key is zero
	is.True(allZero(rsaHeld.D))                                                // the RSA exponent too
	is.True(allZero(rsaHeld.Primes[0]) && allZero(rsaHeld.Primes[1]))          // and its primes
}

func allZero(n *big.Int) bool {
	for _, w := range n.Bits() {
		if w != 0 {
			return false
		}
	}
	return true
}
