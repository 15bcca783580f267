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

func TestTheCredentialHelperReadsGitsRequest(t *testing.T) {
	for _, c := range []struct {
		name, in       string
		protocol, host string
		ok             bool
	}{
		{"git's request", "protocol=https\nhost=git.example\npath=org/repo.git\n\n", "https", "git.example", true},
		{"without the blank line", "protocol=https\nhost=git.example:8443", "https", "git.example:8443", true},
		{"CRLF lines", "protocol=https\r\nhost=h\r\n\r\n", "https", "h", true},
		{"stops at the blank line", "protocol=https\n\nhost=after\n", "https", "", true},
		{"other keys ignored", "capability[]=authtype\nwwwauth[]=Basic realm=\"x\"\nprotocol=http\nhost=h\n", "http", "h", true},
		{"the last value wins", "host=a\nhost=b\n", "", "b", true},
		{"an empty value", "protocol=\nhost=h\n", "", "h", true},
		{"a line without =", "protocol=https\nhost\n", "", "", false},
		{"an empty key", "=https\n", "", "", false},
		{"a NUL", "protocol=https\nhost=h\x00\n", "", "", false},
		{"too large", "protocol=https\npath=" + strings.Repeat("p", local.MaxCredentialInput) + "\n", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			protocol, host, err := local.ParseCredentialInput([]byte(c.in))
			is.Equal(err == nil, c.ok) // read or refused
			is.Equal(protocol, c.protocol)
			is.Equal(host, c.host)
			if err != nil {
				is.True(!strings.Contains(err.Error(), "https")) // never quoting the input
			}
		})
	}
}

func TestTheCredentialHelperAnswersNothingOutsideASessionOrForAnotherProtocol(t *testing.T) {
	for _, c := range []struct {
		name, in, dir string
	}{
		{"no session", "protocol=https\nhost=h\n\n", ""},
		{"plain http", "protocol=http\nhost=h\n\n", "/nowhere"},
		{"a host with a path", "protocol=https\nhost=h/x\n\n", "/nowhere"},
		{"a host with user information", "protocol=https\nhost=u@h\n\n", "/nowhere"},
		{"no host", "protocol=https\n\n", "/nowhere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			var out, errOut bytes.Buffer
			err := local.RunGitCredential(context.Background(), []string{"get"}, strings.NewReader(c.in), &out, &errOut,
				func(string) string { return c.dir })
			is.NoErr(err)          // git goes on without
			is.Equal(out.Len(), 0) // given nothing
		})
	}
	t.Run("store and erase are ignored", func(t *testing.T) {
		is := is.New(t)
		for _, action := range []string{"store", "erase", "unknown"} {
			var out bytes.Buffer
			err := local.RunGitCredential(context.Background(), []string{action},
				strings.NewReader("protocol=https\nhost=h\npassword=x\n\n"), &out, &out, func(string) string { return "/nowhere" })
			is.NoErr(err)          // accepted
			is.Equal(out.Len(), 0) // and ignored: the Hub keeps the tokens
		}
	})
}

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

func TestCredentialRequestsRoundTripWithinTheirBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want local.CredRequest
		ok   bool
	}{
		{"a token", local.WriteCredRequest(local.CredRequest{Op: "token", Host: "git.example:8443"}), local.CredRequest{Op: "token", Host: "git.example:8443"}, true},
		{"a signature", local.WriteCredRequest(local.CredRequest{Op: "sign", Data: []byte("a\x00b\n")}), local.CredRequest{Op: "sign", Data: []byte("a\x00b\n")}, true},
		{"an empty signature", []byte("wharf-cred/1 sign 0\n"), local.CredRequest{Op: "sign", Data: []byte{}}, true},
		{"another version", []byte("wharf-cred/2 token h\n"), local.CredRequest{}, false},
		{"an unknown operation", []byte("wharf-cred/1 key h\n"), local.CredRequest{}, false},
		{"a host with a space", []byte("wharf-cred/1 token a b\n"), local.CredRequest{}, false},
		{"a host with a control character", []byte("wharf-cred/1 token a\x01\n"), local.CredRequest{}, false},
		{"a cut payload", []byte("wharf-cred/1 sign 10\nabc"), local.CredRequest{}, false},
		{"a signed length", []byte("wharf-cred/1 sign +3\nabc"), local.CredRequest{}, false},
		{"a leading zero", []byte("wharf-cred/1 sign 03\nabc"), local.CredRequest{}, false},
		{"too much to sign", []byte("wharf-cred/1 sign 8388609\n"), local.CredRequest{}, false},
		{"a line too long", []byte("wharf-cred/1 token " + strings.Repeat("h", 600) + "\n"), local.CredRequest{}, false},
		{"no line feed", []byte("wharf-cred/1 token h"), local.CredRequest{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := local.ReadCredRequest(c.in)
			is.Equal(err == nil, c.ok) // read or refused
			if c.ok {
				is.Equal(got, c.want) // as written
			}
		})
	}
}
