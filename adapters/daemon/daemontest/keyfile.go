package daemontest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RegisterKeyFile registers the private keys a PEM file of the state
// directory dir holds (rel: "push.key", "acme/acme_account+key") as
// secrets named after name: every line of a private key block's body,
// allowed in that file alone, and the key's secret scalar in base64url
// and hex, allowed nowhere. A Hub keeps such keys in the clear in its
// private state directory (hub.key, push.key, the ACME cache); anywhere
// else they are a leak. It returns how many private keys it registered
// and fails on a private key block it cannot parse.
func (s *Secrets) RegisterKeyFile(name, dir, rel string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return 0, err
	}
	n := 0
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if !strings.Contains(block.Type, "PRIVATE KEY") {
			continue // a certificate beside its key is public
		}
		n++
		key := fmt.Sprintf("%s (key %d of %s)", name, n, rel)
		for i, line := range strings.Split(string(pem.EncodeToMemory(block)), "\n") {
			if strings.HasPrefix(line, "-----") || len(line) < 16 {
				continue
			}
			s.Register(fmt.Sprintf("%s, PEM line %d", key, i), line, InFile(rel))
		}
		scalar, err := privateScalar(block.Bytes)
		if err != nil {
			return n, fmt.Errorf("%s: %w", key, err)
		}
		s.Register(key+", base64url", base64.RawURLEncoding.EncodeToString(scalar))
		s.Register(key+", hex", hex.EncodeToString(scalar))
	}
	return n, nil
}

// privateScalar returns the secret number of a PKCS #8, SEC 1 or PKCS #1
// private key: what an encoding of the key always contains.
func privateScalar(der []byte) ([]byte, error) {
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(der); err != nil {
		if key, err = x509.ParseECPrivateKey(der); err != nil {
			if key, err = x509.ParsePKCS1PrivateKey(der); err != nil {
				return nil, fmt.Errorf("no PKCS #8, SEC 1 or PKCS #1 private key")
			}
		}
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k.Bytes()
	case ed25519.PrivateKey:
		return k.Seed(), nil
	case *rsa.PrivateKey:
		return k.D.Bytes(), nil
	}
	return nil, fmt.Errorf("a private key of type %T", key)
}
