package local_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// FuzzGPGArgs feeds wharf gpg's command-line parser arbitrary arguments
// (NUL-separated): it never panics, and what it takes is a detached,
// armored signing with a key, or a verification of a signature file.
func FuzzGPGArgs(f *testing.F) {
	for _, s := range []string{"--status-fd=2\x00-bsau\x00KEY", "--keyid-format=long\x00--status-fd=1\x00--verify\x00s\x00-",
		"-u", "--local-user", "--status-fd", "-bsau", "--\x00-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := local.ParseGPGArgs(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		switch {
		case g.Sign == g.Verify:
			t.Fatalf("neither or both modes: %+v", g)
		case g.StatusFD < 0 || g.StatusFD > 2:
			t.Fatalf("status fd %d", g.StatusFD)
		case g.Sign && (g.LocalUser == "" || len(g.Files) > 0):
			t.Fatalf("a signing without a key or with files: %+v", g)
		case g.Verify && (len(g.Files) < 1 || len(g.Files) > 2):
			t.Fatalf("a verification of %d files", len(g.Files))
		}
	})
}

// FuzzGPGVerify feeds wharf gpg --verify arbitrary signatures over a
// fixed payload: it never panics, writes only gpg status lines on the
// status fd, and says GOODSIG (exit 0) for the session key's own
// signature only.
func FuzzGPGVerify(f *testing.F) {
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	k, err := v.GenerateOpenPGP("Ann <ann@example.com>", []byte("pass"))
	if err != nil {
		f.Fatal(err)
	}
	if err := v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, []byte("pass")); err != nil {
		f.Fatal(err)
	}
	data := []byte("tree 4b825dc6\n\nmessage\n")
	good, err := v.SignOpenPGP("p", data)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(bytes.Replace(good, []byte("\n="), []byte("\nA="), 1))
	f.Add([]byte("-----BEGIN PGP SIGNATURE-----\n\n-----END PGP SIGNATURE-----\n"))
	f.Add([]byte{0x88, 0x00})
	f.Fuzz(func(t *testing.T, sig []byte) {
		code, status, _ := local.VerifyGPG(k.PublicKey, sig, data, brokerEpoch)
		for _, line := range strings.Split(strings.TrimSuffix(status, "\n"), "\n") {
			if !strings.HasPrefix(line, "[GNUPG:] ") {
				t.Fatalf("a status line that is not one: %q", line)
			}
		}
		if (code == 0) != strings.Contains(status, "[GNUPG:] GOODSIG ") {
			t.Fatalf("exit %d with status %q", code, status)
		}
		if code == 0 && !strings.Contains(status, "VALIDSIG "+k.Fingerprint) {
			t.Fatalf("good, but not by the session's key: %q", status)
		}
	})
}
