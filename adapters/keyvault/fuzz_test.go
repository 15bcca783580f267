package keyvault

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// FuzzImportKey feeds any bytes as an SSH or an OpenPGP private key, with
// any passphrase. An import never panics and ends in bounded time; it
// either refuses as Invalid, without quoting the passphrase, or returns a
// key whose secret is really there: an SSH key unlocks with the
// passphrase it came with and signs for its public key; an unprotected
// OpenPGP key unlocks and signs, and a protected one holds a signing
// secret (and signs if the passphrase happens to open it).
func FuzzImportKey(f *testing.F) {
	ed := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	plain, err := ssh.MarshalPrivateKey(ed, "seed")
	if err != nil {
		f.Fatal(err)
	}
	enc, err := ssh.MarshalPrivateKeyWithPassphrase(ed, "seed", []byte("pass"))
	if err != nil {
		f.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pem.EncodeToMemory(plain), []byte(nil), false)
	f.Add(pem.EncodeToMemory(enc), []byte("pass"), false)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), []byte(nil), false)
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----\n"), []byte("x"), false)
	for _, protect := range []bool{false, true} {
		f.Add(fuzzPGPKey(f, protect), []byte("pass"), true)
	}
	v, err := New(Options{KeyFile: filepath.Join(f.TempDir(), "hub.key")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key, pass []byte, asOpenPGP bool) {
		if asOpenPGP {
			fuzzOpenPGP(t, v, key, pass)
		} else {
			fuzzSSH(t, v, key, pass)
		}
	})
}

func fuzzSSH(t *testing.T, v *Vault, key, pass []byte) {
	k, err := v.ImportSSH(key, pass)
	if err != nil {
		refusedWell(t, err, pass)
		return
	}
	defer v.Lock("f")
	if err := v.Unlock("f", hub.CredentialSSH, k.Sealed, pass); err != nil {
		t.Fatalf("an imported key does not unlock with its passphrase: %v", err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
	if err != nil || ssh.FingerprintSHA256(pub) != k.Fingerprint {
		t.Fatalf("the public key line %q does not match fingerprint %s: %v", k.PublicKey, k.Fingerprint, err)
	}
	sig, err := v.lookup("f").signer.Sign(rand.Reader, []byte("data"))
	if err != nil || pub.Verify([]byte("data"), sig) != nil {
		t.Fatalf("an imported key does not sign for its public key: %v", err)
	}
}

func fuzzOpenPGP(t *testing.T, v *Vault, key, pass []byte) {
	k, err := v.ImportOpenPGP(key)
	if err != nil {
		refusedWell(t, err, nil)
		return
	}
	defer v.Lock("g")
	if !k.Protected {
		if err := v.Unlock("g", hub.CredentialOpenPGP, k.Sealed, nil); err != nil {
			t.Fatalf("an unprotected key does not unlock: %v", err)
		}
	} else {
		kind, _, err := splitSealed(k.Sealed)
		if err != nil || kind != kindOpenPGPPassphrase {
			t.Fatalf("a protected key sealed as %d: %v", kind, err)
		}
		body, err := v.open(kind, k.Sealed)
		if err != nil {
			t.Fatalf("a protected key's seal does not open: %v", err)
		}
		e, err := readOneEntity(body)
		if err != nil {
			t.Fatalf("a protected key does not read back: %v", err)
		}
		if s, ok := e.SigningKey(v.clock.Now()); !ok || s.PrivateKey == nil || s.PrivateKey.Dummy() {
			t.Fatal("a protected key holds no signing secret")
		}
		if err := v.Unlock("g", hub.CredentialOpenPGP, k.Sealed, pass); err != nil {
			refusedWell(t, err, pass)
			return
		}
	}
	if _, err := v.SignOpenPGP("g", []byte("data")); err != nil {
		t.Fatalf("an unlocked key does not sign: %v", err)
	}
}

// refusedWell fails unless err is Invalid and quotes no passphrase.
func refusedWell(t *testing.T, err error, pass []byte) {
	t.Helper()
	if hub.KindOf(err) != hub.Invalid {
		t.Fatalf("refused as %v, not Invalid: %v", hub.KindOf(err), err)
	}
	if len(pass) >= 4 && strings.Contains(err.Error(), string(pass)) && !fixedRefusal(err) {
		t.Fatalf("the refusal quotes the passphrase: %v", err)
	}
}

// fixedRefusal reports whether err says exactly one of the vault's fixed
// import refusals: a constant text cannot quote the input, though a short
// passphrase may happen to be a word of it ("pass" in "the passphrase is
// wrong", which the fuzzer found).
func fixedRefusal(err error) bool {
	for _, fixed := range []error{errPGPNotAKey, errPGPTooLarge, errPGPDamaged, errPGPNotOne, errPGPPublic, errPGPNoSigner,
		errPGPCostly, errPGPUserID, errSSHNotAKey, errSSHTooLarge, errSSHTwoKeys, errSSHPKCS8Enc, errSSHSecurityKey, errSSHDSA,
		errSSHShortRSA, errSSHKeyType, errSSHCipher, errSSHRounds, errSSHMismatch, errSSHDamaged, errNeedPassphrase,
		errWrongPass, errWrongOrDamaged, errEmptyPass, errComment} {
		if err.Error() == fixed.Error() {
			return true
		}
	}
	return false
}

// fuzzPGPKey makes an armored ed25519 OpenPGP secret key, protected
// with "pass" when protect is set.
func fuzzPGPKey(f *testing.F, protect bool) []byte {
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	e, err := openpgp.NewEntity("Fuzz", "", "fuzz@example.com", cfg)
	if err != nil {
		f.Fatal(err)
	}
	var bin, out bytes.Buffer
	if protect {
		if err := e.EncryptPrivateKeys([]byte("pass"), cfg); err != nil {
			f.Fatal(err)
		}
		err = e.SerializePrivateWithoutSigning(&bin, cfg)
	} else {
		err = e.SerializePrivate(&bin, cfg)
	}
	if err != nil {
		f.Fatal(err)
	}
	w, err := armor.Encode(&out, openpgp.PrivateKeyType, nil)
	if err != nil {
		f.Fatal(err)
	}
	w.Write(bin.Bytes())
	w.Close()
	return out.Bytes()
}
