package local_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
)

func TestWharfGPGTakesGitsCommandLinesOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want local.GPGArgs
		ok   bool
	}{
		{"git signs", []string{"--status-fd=2", "-bsau", "ABCD"}, local.GPGArgs{Sign: true, StatusFD: 2, LocalUser: "ABCD"}, true},
		{"long options", []string{"--status-fd", "1", "--detach-sign", "--sign", "--armor", "--local-user", "K"},
			local.GPGArgs{Sign: true, StatusFD: 1, LocalUser: "K"}, true},
		{"a key glued to -u", []string{"-bsauKEY"}, local.GPGArgs{Sign: true, LocalUser: "KEY"}, true},
		{"git verifies", []string{"--keyid-format=long", "--status-fd=1", "--verify", "/tmp/sig", "-"},
			local.GPGArgs{Verify: true, StatusFD: 1, Files: []string{"/tmp/sig", "-"}}, true},
		{"after --", []string{"--verify", "--", "-sig"}, local.GPGArgs{Verify: true, Files: []string{"-sig"}}, true},
		{"an attached signature", []string{"-sau", "K"}, local.GPGArgs{}, false},
		{"no key", []string{"-bsa"}, local.GPGArgs{}, false},
		{"no armor", []string{"-bsu", "K"}, local.GPGArgs{}, false},
		{"another status fd", []string{"--status-fd=3", "-bsau", "K"}, local.GPGArgs{}, false},
		{"an unknown option", []string{"--export-secret-keys"}, local.GPGArgs{}, false},
		{"an unknown short option", []string{"-bsaxu", "K"}, local.GPGArgs{}, false},
		{"verify without a signature", []string{"--verify"}, local.GPGArgs{}, false},
		{"sign and verify", []string{"--verify", "-bsau", "K", "s"}, local.GPGArgs{}, false},
		{"nothing", nil, local.GPGArgs{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := local.ParseGPGArgs(c.args)
			is.Equal(err == nil, c.ok) // taken or refused
			if c.ok {
				is.Equal(got, c.want) // as git means it
			}
		})
	}
}

func TestWharfGPGVerifiesTheSessionsKeyOnly(t *testing.T) {
	is := is.New(t)
	v, _ := newBroker()
	mine := unlockedOpenPGP(t, v, "mine")
	unlockedOpenPGP(t, v, "other")
	data := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\na commit\n")
	sig, err := v.SignOpenPGP("mine", data)
	is.NoErr(err)
	otherSig, err := v.SignOpenPGP("other", data)
	is.NoErr(err)
	for _, c := range []struct {
		name       string
		key        string
		sig, data  []byte
		code       int
		wantStatus []string
	}{
		{"good", mine.PublicKey, sig, data, 0, []string{"[GNUPG:] NEWSIG\n", "[GNUPG:] GOODSIG ", "[GNUPG:] VALIDSIG " + mine.Fingerprint + " ", "[GNUPG:] TRUST_ULTIMATE"}},
		{"bad", mine.PublicKey, sig, append(bytes.Clone(data), '!'), 1, []string{"[GNUPG:] BADSIG "}},
		{"another signer", mine.PublicKey, otherSig, data, 2, []string{"[GNUPG:] ERRSIG ", "[GNUPG:] NO_PUBKEY "}},
		{"no key in the session", "", sig, data, 2, []string{"[GNUPG:] NO_PUBKEY "}},
		{"no signature", mine.PublicKey, []byte("garbage"), data, 2, []string{"[GNUPG:] NODATA"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			code, status, _ := local.VerifyGPG(c.key, c.sig, c.data, brokerEpoch)
			is.Equal(code, c.code) // gpg's exit status
			for _, w := range c.wantStatus {
				is.True(strings.Contains(status, w)) // and status lines
			}
			if c.code != 0 {
				is.True(!strings.Contains(status, "GOODSIG")) // never good
			}
		})
	}
}

func TestWharfGPGRefusesToSignWithAKeyThatIsNotTheSessions(t *testing.T) {
	is := is.New(t)
	v, _ := newBroker()
	k := unlockedOpenPGP(t, v, "mine")
	dir := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(dir, "signing.asc"), []byte(k.PublicKey), 0o600))
	var out, errOut bytes.Buffer
	code := local.RunGPG(context.Background(), []string{"--status-fd=2", "-bsau", "DEADBEEFDEADBEEF"}, strings.NewReader("data"),
		&out, &errOut, func(string) string { return dir })
	is.Equal(code, 2)                                                   // refused
	is.Equal(out.Len(), 0)                                              // no signature
	is.True(strings.Contains(errOut.String(), "[GNUPG:] FAILURE sign")) // as gpg reports it
}
