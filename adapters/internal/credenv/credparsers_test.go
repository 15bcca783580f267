package credenv_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
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
		{"too large", "protocol=https\npath=" + strings.Repeat("p", credenv.MaxCredentialInput) + "\n", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			protocol, host, err := credenv.ParseCredentialInput([]byte(c.in))
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
			err := credenv.RunGitCredential(context.Background(), []string{"get"}, strings.NewReader(c.in), &out, &errOut,
				func(string) string { return c.dir })
			is.NoErr(err)          // git goes on without
			is.Equal(out.Len(), 0) // given nothing
		})
	}
	t.Run("store and erase are ignored", func(t *testing.T) {
		is := is.New(t)
		for _, action := range []string{"store", "erase", "unknown"} {
			var out bytes.Buffer
			err := credenv.RunGitCredential(context.Background(), []string{action},
				strings.NewReader("protocol=https\nhost=h\npassword=x\n\n"), &out, &out, func(string) string { return "/nowhere" })
			is.NoErr(err)          // accepted
			is.Equal(out.Len(), 0) // and ignored: the Hub keeps the tokens
		}
	})
}

func TestCredentialRequestsRoundTripWithinTheirBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want credenv.CredRequest
		ok   bool
	}{
		{"a token", credenv.WriteCredRequest(credenv.CredRequest{Op: "token", Host: "git.example:8443"}), credenv.CredRequest{Op: "token", Host: "git.example:8443"}, true},
		{"a signature", credenv.WriteCredRequest(credenv.CredRequest{Op: "sign", Data: []byte("a\x00b\n")}), credenv.CredRequest{Op: "sign", Data: []byte("a\x00b\n")}, true},
		{"an empty signature", []byte("wharf-cred/1 sign 0\n"), credenv.CredRequest{Op: "sign", Data: []byte{}}, true},
		{"another version", []byte("wharf-cred/2 token h\n"), credenv.CredRequest{}, false},
		{"an unknown operation", []byte("wharf-cred/1 key h\n"), credenv.CredRequest{}, false},
		{"a host with a space", []byte("wharf-cred/1 token a b\n"), credenv.CredRequest{}, false},
		{"a host with a control character", []byte("wharf-cred/1 token a\x01\n"), credenv.CredRequest{}, false},
		{"a cut payload", []byte("wharf-cred/1 sign 10\nabc"), credenv.CredRequest{}, false},
		{"a signed length", []byte("wharf-cred/1 sign +3\nabc"), credenv.CredRequest{}, false},
		{"a leading zero", []byte("wharf-cred/1 sign 03\nabc"), credenv.CredRequest{}, false},
		{"too much to sign", []byte("wharf-cred/1 sign 8388609\n"), credenv.CredRequest{}, false},
		{"a line too long", []byte("wharf-cred/1 token " + strings.Repeat("h", 600) + "\n"), credenv.CredRequest{}, false},
		{"no line feed", []byte("wharf-cred/1 token h"), credenv.CredRequest{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := credenv.ReadCredRequest(c.in)
			is.Equal(err == nil, c.ok) // read or refused
			if c.ok {
				is.Equal(got, c.want) // as written
			}
		})
	}
}
