package fakes_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

func TestTheFakeBrokerAnswersFromItsTableAsItIsNow(t *testing.T) {
	is := is.New(t)
	v := fakes.NewKeyVault(fakes.NewClock(vaultEpoch))
	b := fakes.NewSessionBroker(v, fakes.NewClock(vaultEpoch))
	sealed, err := v.SealToken([]byte("tok-123"))
	is.NoErr(err)
	b.LendToken("git.example", fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	user, token, err := b.Token(t.Context(), "git.example")
	is.NoErr(err)                      // lent
	is.Equal(user, "ann")              // its user
	is.Equal(string(token), "tok-123") // and token
	_, _, err = b.Token(t.Context(), "other.example")
	is.Equal(hub.KindOf(err), hub.NotFound) // another host gets nothing
	_, err = b.SignOpenPGP(t.Context(), []byte("x"))
	is.Equal(hub.KindOf(err), hub.NotFound) // no signing key lent

	k, err := v.GenerateOpenPGP("Ann <ann@example.com>", []byte("pass"))
	is.NoErr(err)
	is.NoErr(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, []byte("pass")))
	b.LendSigning("p")
	sig, err := b.SignOpenPGP(t.Context(), []byte("payload"))
	is.NoErr(err)         // signed
	is.True(len(sig) > 0) // a signature

	b.Revoke("t")
	_, _, err = b.Token(t.Context(), "git.example")
	is.Equal(hub.KindOf(err), hub.NotFound) // revoked at once
	is.Equal(len(b.Uses()), 2)              // the token and the signature were used
	b.End()
	_, err = b.SignOpenPGP(t.Context(), []byte("payload"))
	is.True(err != nil) // nothing after the end
}

func TestTheFakeBrokersAgentLosesARevokedKeyAtOnce(t *testing.T) {
	is := is.New(t)
	v := fakes.NewKeyVault(fakes.NewClock(vaultEpoch))
	k, err := v.GenerateSSH([]byte("pass"), "c")
	is.NoErr(err)
	is.NoErr(v.Unlock("s", hub.CredentialSSH, k.Sealed, []byte("pass")))
	b := fakes.NewSessionBroker(v, fakes.NewClock(vaultEpoch))
	b.LendSSH("s")
	dir, err := os.MkdirTemp("", "brk")
	is.NoErr(err)
	defer os.RemoveAll(dir)
	a, err := b.ServeAgent(filepath.Join(dir, "a.sock"))
	is.NoErr(err)
	defer a.Close()
	keys := func() int {
		c, err := net.Dial("unix", a.Path())
		is.NoErr(err)
		defer c.Close()
		list, err := agent.NewClient(c).List()
		is.NoErr(err)
		return len(list)
	}
	is.Equal(keys(), 1) // the lent key
	b.Revoke("s")
	is.Equal(keys(), 0) // gone at once
}
