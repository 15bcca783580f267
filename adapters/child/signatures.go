package child

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"os"
	"path/filepath"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/child/docfeed"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// The session checks its commits' signatures against the workspace's own
// signing key, whose public half the local backend leaves in the session's
// credentials folder (childproto): in process, without gpg or ssh-keygen,
// so the document feed can say which commits the Hub's key signed.

// maxPublicKey bounds the public key files read.
const maxPublicKey = 1 << 20

// sessionSignatures returns the checker of the workspace's signing key,
// or nil when the session has none (or its file cannot be read).
func sessionSignatures(getenv func(string) string) docfeed.SignatureChecker {
	dir := getenv(childproto.CredentialsEnv)
	if dir == "" {
		return nil
	}
	if b, err := readSmall(filepath.Join(dir, childproto.SigningSSHKeyFile)); err == nil {
		if key, _, _, _, err := ssh.ParseAuthorizedKey(b); err == nil {
			return sshSignatures{key: key}
		}
	}
	if b, err := readSmall(filepath.Join(dir, childproto.SigningOpenPGPKeyFile)); err == nil {
		if ring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(b)); err == nil && len(ring) == 1 {
			return openPGPSignatures{ring: ring}
		}
	}
	return nil
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, maxPublicKey+1)
	n, _ := f.Read(b)
	if n > maxPublicKey {
		return nil, os.ErrInvalid
	}
	return b[:n], nil
}

// openPGPSignatures checks armored detached OpenPGP signatures.
type openPGPSignatures struct{ ring openpgp.EntityList }

func (o openPGPSignatures) Check(payload, sig []byte) bool {
	_, err := openpgp.CheckArmoredDetachedSignature(o.ring, bytes.NewReader(payload), bytes.NewReader(sig), nil)
	return err == nil
}

// sshSignatures checks git's SSH signatures (the SSHSIG format of
// OpenSSH's PROTOCOL.sshsig, namespace "git") by one key.
type sshSignatures struct{ key ssh.PublicKey }

func (s sshSignatures) Check(payload, sig []byte) bool {
	return verifySSHSIG(s.key, "git", payload, sig)
}

// verifySSHSIG reports whether armored is a valid SSHSIG signature of
// message by key in namespace.
func verifySSHSIG(key ssh.PublicKey, namespace string, message, armored []byte) bool {
	text := strings.TrimSpace(string(armored))
	const begin, end = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
	if !strings.HasPrefix(text, begin) || !strings.HasSuffix(text, end) {
		return false
	}
	b64 := strings.Join(strings.Fields(text[len(begin):len(text)-len(end)]), "")
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || !bytes.HasPrefix(blob, []byte("SSHSIG")) {
		return false
	}
	var sig struct {
		Version    uint32
		PublicKey  []byte
		Namespace  string
		Reserved   string
		HashAlg    string
		Signature  []byte
		Unexpected []byte `ssh:"rest"`
	}
	if ssh.Unmarshal(blob[len("SSHSIG"):], &sig) != nil || sig.Version != 1 || len(sig.Unexpected) != 0 ||
		sig.Namespace != namespace || !bytes.Equal(sig.PublicKey, key.Marshal()) {
		return false
	}
	var h hash.Hash
	switch sig.HashAlg {
	case "sha512":
		h = sha512.New()
	case "sha256":
		h = sha256.New()
	default:
		return false
	}
	h.Write(message)
	signed := append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, HashAlg string
		Hash                         []byte
	}{sig.Namespace, sig.Reserved, sig.HashAlg, h.Sum(nil)})...)
	var s ssh.Signature
	if ssh.Unmarshal(sig.Signature, &s) != nil || s.Format == ssh.KeyAlgoRSA {
		return false // OpenSSH's sshsig refuses RSA signatures over SHA-1 too
	}
	return key.Verify(signed, &s) == nil
}
