package keyvault_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/hub"
)

const exchangeTimeout = 10 * time.Second

// privateSocket returns a socket path in a new private folder.
func privateSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "agent.sock")
}

// lendKey imports seedKey(b) as credential id, unlocks it and serves an
// agent offering it.
func lendKey(t *testing.T, v *keyvault.Vault, id string, b byte, opts hub.AgentOptions) (hub.CredentialAgent, ssh.PublicKey) {
	t.Helper()
	k, err := v.ImportSSH(seedOpenSSH(t, b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(id, hub.CredentialSSH, k.Sealed, nil); err != nil {
		t.Fatal(err)
	}
	opts.Path = privateSocket(t)
	ag, err := v.ServeAgent(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag.Close() })
	ag.Offer([]string{id})
	pub, _ := ssh.NewPublicKey(seedKey(b).Public())
	return ag, pub
}

func dial(t *testing.T, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(exchangeTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

// exchange writes one framed request and reads one framed reply.
func exchange(is *is.I, c net.Conn, req []byte) []byte {
	frame := append([]byte{0, 0, 0, byte(len(req))}, req...)
	_, err := c.Write(frame)
	is.NoErr(err) // the request is sent
	head := make([]byte, 4)
	_, err = io.ReadFull(c, head)
	is.NoErr(err) // a reply comes
	body := make([]byte, int(head[0])<<24|int(head[1])<<16|int(head[2])<<8|int(head[3]))
	_, err = io.ReadFull(c, body)
	is.NoErr(err) // whole
	return body
}

func TestRequestsToChangeKeysAreAnsweredWithAFailureUnreadAndUnlogged(t *testing.T) {
	is := is.New(t)
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	v := newVault(t)
	ag, pub := lendKey(t, v, "a", 1, hub.AgentOptions{OnUse: func(context.Context, hub.CredentialUse) error {
		return errors.New("denied")
	}})
	c := dial(t, ag.Path())
	for _, req := range [][]byte{
		append([]byte{17}, "\x00\x00\x00\x0bssh-ed25519garbage"...), // add a key
		append([]byte{25}, "junk"...),                               // add a constrained key
		append([]byte{22}, "\x00\x00\x00\x01x"...),                  // lock
		{23}, // unlock
		{19}, // remove all
		append([]byte{27}, "\x00\x00\x00\x18session-bind@openssh.com"...), // an extension
		append([]byte{13}, "\xff\xff\xff\xff"...),                         // a malformed signature request
		{200}, // an unknown request
	} {
		is.Equal(exchange(is, c, req), []byte{5}) // SSH_AGENT_FAILURE
	}
	is.Equal(exchange(is, c, []byte{11})[0], byte(12)) // the connection is still in step: a listing answers
	_, err := agent.NewClient(c).Sign(pub, []byte("data"))
	is.True(err != nil)           // a use the owner denies fails
	is.Equal(logged.String(), "") // and nothing reached the log
	is.True(v.Unlocked("a"))      // nor changed the vault
}

func TestARequestOverTheBoundEndsItsConnection(t *testing.T) {
	is := is.New(t)
	ag, _ := lendKey(t, newVault(t), "a", 1, hub.AgentOptions{})
	c := dial(t, ag.Path())
	_, err := c.Write([]byte{0, 4, 0, 1}) // 256 KiB + 1
	is.NoErr(err)
	_, err = c.Read(make([]byte, 1))
	is.True(err != nil) // the agent hangs up at once, reading none of it
	keys, err := agent.NewClient(dial(t, ag.Path())).List()
	is.NoErr(err)          // other connections go on
	is.Equal(len(keys), 1) // lending the key
}

func TestConnectionsBeyondTheBoundAreClosed(t *testing.T) {
	is := is.New(t)
	ag, _ := lendKey(t, newVault(t), "a", 1, hub.AgentOptions{})
	for range 32 {
		_, err := agent.NewClient(dial(t, ag.Path())).List()
		is.NoErr(err) // 32 connections are served at once
	}
	_, err := agent.NewClient(dial(t, ag.Path())).List()
	is.True(err != nil) // the 33rd is closed
}

func TestAnAgentRefusesAFolderOthersCanEnter(t *testing.T) {
	is := is.New(t)
	path := privateSocket(t)
	is.NoErr(os.Chmod(filepath.Dir(path), 0o755))
	_, err := newVault(t).ServeAgent(hub.AgentOptions{Path: path})
	is.Equal(hub.KindOf(err), hub.Internal) // refused
	_, err = os.Lstat(path)
	is.True(os.IsNotExist(err)) // no socket made
}

func TestOnUseIsBoundedByTheVaultsTimeout(t *testing.T) {
	is := is.New(t)
	v, err := keyvault.New(keyvault.Options{KeyFile: filepath.Join(t.TempDir(), "k"), UseTimeout: 50 * time.Millisecond})
	is.NoErr(err)
	ended := make(chan error, 1)
	ag, pub := lendKey(t, v, "a", 1, hub.AgentOptions{OnUse: func(ctx context.Context, _ hub.CredentialUse) error {
		<-ctx.Done() // an owner who never answers
		ended <- ctx.Err()
		return ctx.Err()
	}})
	_, err = agent.NewClient(dial(t, ag.Path())).Sign(pub, []byte("data"))
	is.True(err != nil) // no answer is a refusal
	select {
	case err := <-ended:
		is.True(errors.Is(err, context.DeadlineExceeded)) // once the bound passed
	case <-time.After(exchangeTimeout):
		t.Fatal("OnUse was never bounded")
	}
}
