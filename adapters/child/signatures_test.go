package child

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// sshSigned signs message with a new ed25519 key through ssh-keygen, as
// git does, and returns the key's public half and the armored signature.
func sshSigned(t *testing.T, message []byte) (ssh.PublicKey, []byte) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (.ci/run installs it)")
	}
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "sign", "-n", "git", "-f", keyFile)
	cmd.Stdin = bytes.NewReader(message)
	sig, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer.PublicKey(), sig
}

func TestAnSSHSignatureVerifiesOnlyForItsKeyMessageAndNamespace(t *testing.T) {
	is := is.New(t)
	message := []byte("tree 4b82\nauthor a <a@b> 1 +0000\n\nsigned\n")
	key, sig := sshSigned(t, message)
	is.True(verifySSHSIG(key, "git", message, sig))          // ssh-keygen's signature verifies
	is.True(!verifySSHSIG(key, "git", []byte("other"), sig)) // for its message only
	is.True(!verifySSHSIG(key, "file", message, sig))        // in its namespace only
	other, _ := sshSigned(t, message)
	is.True(!verifySSHSIG(other, "git", message, sig))             // by its key only
	is.True(!verifySSHSIG(key, "git", message, []byte("garbage"))) // and nothing else
}

func TestTheSessionChecksSignaturesWithTheKeyInItsCredentialsFolder(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == childproto.CredentialsEnv {
			return dir
		}
		return ""
	}
	is.True(sessionSignatures(func(string) string { return "" }) == nil) // no folder: nothing to check with

	message := []byte("payload\n")
	key, sig := sshSigned(t, message)
	is.NoErr(os.WriteFile(filepath.Join(dir, childproto.SigningSSHKeyFile), ssh.MarshalAuthorizedKey(key), 0o600))
	chk := sessionSignatures(getenv)
	is.True(chk != nil)                        // the SSH key read
	is.True(chk.Check(message, sig))           // its signature verifies
	is.True(!chk.Check([]byte("forged"), sig)) // a changed commit does not
	is.NoErr(os.Remove(filepath.Join(dir, childproto.SigningSSHKeyFile)))

	e, err := openpgp.NewEntity("Ann", "", "ann@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return time.Now().Add(-time.Hour) }})
	is.NoErr(err)
	var pub, detached strings.Builder
	aw, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	is.NoErr(err)
	is.NoErr(e.Serialize(aw))
	is.NoErr(aw.Close())
	is.NoErr(openpgp.ArmoredDetachSign(&detached, e, bytes.NewReader(message), nil))
	is.NoErr(os.WriteFile(filepath.Join(dir, childproto.SigningOpenPGPKeyFile), []byte(pub.String()), 0o600))
	chk = sessionSignatures(getenv)
	is.True(chk != nil)                                              // the OpenPGP key read
	is.True(chk.Check(message, []byte(detached.String())))           // its signature verifies
	is.True(!chk.Check([]byte("forged"), []byte(detached.String()))) // a changed commit does not
}

// An RSA signature over SHA-1 (ssh-rsa) does not verify, as OpenSSH's
// sshsig refuses it: only rsa-sha2-256/512 do.
func TestAnSSHSignatureOverSHA1IsRefused(t *testing.T) {
	is := is.New(t)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	is.NoErr(err)
	signer, err := ssh.NewSignerFromKey(priv)
	is.NoErr(err)
	message := []byte("payload\n")
	h := sha512.Sum512(message)
	signed := append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, HashAlg string
		Hash                         []byte
	}{"git", "", "sha512", h[:]})...)
	armor := func(s *ssh.Signature) []byte {
		blob := append([]byte("SSHSIG"), ssh.Marshal(struct {
			Version                      uint32
			PublicKey                    []byte
			Namespace, Reserved, HashAlg string
			Signature                    []byte
		}{1, signer.PublicKey().Marshal(), "git", "", "sha512", ssh.Marshal(s)})...)
		return []byte("-----BEGIN SSH SIGNATURE-----\n" + base64.StdEncoding.EncodeToString(blob) + "\n-----END SSH SIGNATURE-----\n")
	}
	algo := signer.(ssh.AlgorithmSigner)
	sha512sig, err := algo.SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSASHA512)
	is.NoErr(err)
	is.True(verifySSHSIG(signer.PublicKey(), "git", message, armor(sha512sig))) // rsa-sha2-512 verifies
	sha1sig, err := algo.SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSA)
	is.NoErr(err)
	is.True(!verifySSHSIG(signer.PublicKey(), "git", message, armor(sha1sig))) // ssh-rsa does not
}
