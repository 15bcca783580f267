package credenv_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

// FuzzGitCredentialInput feeds the credential helper's parser what git,
// or anything else run in a session, may write to it: it never panics,
// refuses what is over its bound, and reads one-line values.
func FuzzGitCredentialInput(f *testing.F) {
	f.Add([]byte("protocol=https\nhost=git.example\npath=x\n\n"))
	f.Add([]byte("protocol=https\r\nhost=h:1\r\n"))
	f.Add([]byte("=x\n"))
	f.Add([]byte("host\x00=y"))
	f.Fuzz(func(t *testing.T, in []byte) {
		protocol, host, err := credenv.ParseCredentialInput(in)
		if err != nil {
			return
		}
		if len(in) > credenv.MaxCredentialInput {
			t.Fatal("an input over the bound was read")
		}
		if strings.ContainsAny(protocol+host, "\n\x00") {
			t.Fatalf("a value spans lines: %q %q", protocol, host)
		}
	})
}

// FuzzCredRequest feeds the credential socket's request reader arbitrary
// bytes: it never panics, and what it reads writes back to a request
// that reads the same.
func FuzzCredRequest(f *testing.F) {
	f.Add([]byte("wharf-cred/1 token git.example\n"))
	f.Add([]byte("wharf-cred/1 sign 3\nabc"))
	f.Add([]byte("wharf-cred/1 sign 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := credenv.ReadCredRequest(in)
		if err != nil {
			return
		}
		again, err := credenv.ReadCredRequest(credenv.WriteCredRequest(req))
		if err != nil || again.Op != req.Op || again.Host != req.Host || !bytes.Equal(again.Data, req.Data) {
			t.Fatalf("%+v reads back as %+v (%v)", req, again, err)
		}
	})
}
