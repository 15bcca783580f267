package porttest

import (
	"context"
	"crypto/sha512"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/hub"
)

// vaultTimeout bounds every exchange with an agent in the suite.
const vaultTimeout = 10 * time.Second

// keyVaultAgent is the agent's part of the KeyVault suite.
func keyVaultAgent(t *testing.T, open func(t *testing.T) hub.KeyVault) {
	t.Run("AnAgentListsOnlyTheOfferedUnlockedKeysAtEachRequest", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, b, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		importUnlocked(t, v, "b", b.OpenSSH)
		kc, err := v.GenerateSSH([]byte("pass"), "c")
		is.NoErr(err) // a key that stays locked for now
		f := openPGPFixture(t)
		kp, err := v.ImportOpenPGP(f.Plain)
		is.NoErr(err)
		is.NoErr(v.Unlock("p", hub.CredentialOpenPGP, kp.Sealed, nil)) // an OpenPGP key, unlocked
		ag := serveAgent(t, v, hub.AgentOptions{})
		fi, err := os.Lstat(ag.Path())
		is.NoErr(err)                                  // the socket is there
		is.True(fi.Mode()&fs.ModeSocket != 0)          // a socket
		is.Equal(fi.Mode().Perm(), fs.FileMode(0o600)) // for its owner only
		cl := dialAgent(t, ag.Path())
		is.Equal(listed(is, cl), []string{}) // nothing offered, nothing listed
		ag.Offer([]string{"a", "c", "p"})
		is.Equal(listed(is, cl), fingerprints(a.Public)) // the offered unlocked SSH key only
		is.NoErr(v.Unlock("c", hub.CredentialSSH, kc.Sealed, []byte("pass")))
		is.Equal(listed(is, cl), sortedStrings(ssh.FingerprintSHA256(a.Public), kc.Fingerprint)) // an unlock shows at once
		v.Lock("a")
		is.Equal(listed(is, cl), []string{kc.Fingerprint}) // a lock too, on the same connection
		ag.Offer([]string{"b"})
		is.Equal(listed(is, cl), fingerprints(b.Public)) // and a new offer
		ag.Offer(nil)
		is.Equal(listed(is, cl), []string{}) // down to nothing
	})

	t.Run("SignaturesComeOnlyFromOfferedUnlockedKeys", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, b, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		importUnlocked(t, v, "b", b.OpenSSH)
		ag := serveAgent(t, v, hub.AgentOptions{})
		ag.Offer([]string{"a"})
		cl := dialAgent(t, ag.Path())
		data := []byte("a login's session data")
		sig, err := cl.Sign(a.Public, data)
		is.NoErr(err)                        // signs with an offered key
		is.NoErr(a.Public.Verify(data, sig)) // a good signature
		_, err = cl.Sign(b.Public, data)
		is.True(err != nil) // not with an unlocked key it does not offer
		v.Lock("a")
		_, err = cl.Sign(a.Public, data)
		is.True(err != nil) // nor with a key locked since
	})

	t.Run("RSAKeysSignWithSHA2WhenAsked", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		_, _, rsaKey, _ := sshFixtures(t)
		importUnlocked(t, v, "r", rsaKey.Native)
		ag := serveAgent(t, v, hub.AgentOptions{})
		ag.Offer([]string{"r"})
		cl := dialAgent(t, ag.Path())
		data := []byte("data")
		for flag, format := range map[agent.SignatureFlags]string{
			agent.SignatureFlagRsaSha256: ssh.KeyAlgoRSASHA256,
			agent.SignatureFlagRsaSha512: ssh.KeyAlgoRSASHA512,
		} {
			sig, err := cl.SignWithFlags(rsaKey.Public, data, flag)
			is.NoErr(err)                             // signs
			is.Equal(sig.Format, format)              // with the algorithm asked for
			is.NoErr(rsaKey.Public.Verify(data, sig)) // verifiably
		}
	})

	t.Run("AnAgentAddsRemovesLocksAndExtendsNothing", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, b, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		ag := serveAgent(t, v, hub.AgentOptions{})
		ag.Offer([]string{"a"})
		cl := dialAgent(t, ag.Path())
		is.True(cl.Add(agent.AddedKey{PrivateKey: b.Key, Comment: "x"}) != nil) // add
		is.True(cl.Remove(a.Public) != nil)                                     // remove
		is.True(cl.RemoveAll() != nil)                                          // remove all
		is.True(cl.Lock([]byte("lock")) != nil)                                 // lock
		is.True(cl.Unlock([]byte("lock")) != nil)                               // unlock
		_, err := cl.Extension("session-bind@openssh.com", []byte("x"))
		is.True(err != nil)                              // extensions
		is.Equal(listed(is, cl), fingerprints(a.Public)) // all refused: the listing stands
		is.True(v.Unlocked("a"))                         // the vault too
		_, err = cl.Sign(a.Public, []byte("data"))
		is.NoErr(err) // and the key still signs
	})

	t.Run("OnUseIsAskedBeforeEachSignatureWithItsPurpose", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, _, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		type asked struct {
			use      hub.CredentialUse
			deadline time.Time
		}
		uses := make(chan asked, 4)
		ag := serveAgent(t, v, hub.AgentOptions{OnUse: func(ctx context.Context, u hub.CredentialUse) error {
			dl, _ := ctx.Deadline()
			uses <- asked{u, dl}
			return nil
		}})
		ag.Offer([]string{"a"})
		cl := dialAgent(t, ag.Path())
		login := ssh.Marshal(struct {
			SessionID []byte
			Rest      string
		}{make([]byte, 32), "user"})
		_, err := cl.Sign(a.Public, login)
		is.NoErr(err) // a login signs
		_, err = cl.Sign(a.Public, sshsigBlob([]byte("commit")))
		is.NoErr(err) // a git signature signs
		for _, want := range []hub.CredentialPurpose{hub.PurposeSSHLogin, hub.PurposeSignature} {
			got := <-uses
			is.Equal(got.use.CredentialID, "a")                            // the credential
			is.Equal(got.use.Purpose, want)                                // what it is for
			is.True(!got.use.At.IsZero())                                  // when
			is.True(!got.deadline.IsZero())                                // a bounded ask
			is.True(time.Until(got.deadline) <= 2*time.Minute+time.Second) // of two minutes at most
		}
		is.Equal(len(uses), 0) // once each
	})

	t.Run("ARefusedUseSignsNothing", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, _, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		ag := serveAgent(t, v, hub.AgentOptions{OnUse: func(context.Context, hub.CredentialUse) error {
			return errors.New("the owner said no")
		}})
		ag.Offer([]string{"a"})
		cl := dialAgent(t, ag.Path())
		_, err := cl.Sign(a.Public, []byte("data"))
		is.True(err != nil) // refused
	})

	t.Run("AKeyLockedWhileTheOwnerIsAskedSignsNothing", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, _, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		asking, release := make(chan struct{}), make(chan struct{})
		ag := serveAgent(t, v, hub.AgentOptions{OnUse: func(ctx context.Context, _ hub.CredentialUse) error {
			close(asking)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
		ag.Offer([]string{"a"})
		cl := dialAgent(t, ag.Path())
		done := make(chan error, 1)
		go func() { _, err := cl.Sign(a.Public, []byte("data")); done <- err }()
		wait(t, asking, "the agent to ask")
		v.Lock("a")
		close(release) // the owner allows, too late
		select {
		case err := <-done:
			is.True(err != nil) // the key was locked meanwhile: no signature
		case <-time.After(vaultTimeout):
			t.Fatal("the signature never came back")
		}
	})

	t.Run("CloseRemovesTheSocketAndEndsConnectionsAndWaits", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, _, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		asking := make(chan struct{})
		ag := serveAgent(t, v, hub.AgentOptions{OnUse: func(ctx context.Context, _ hub.CredentialUse) error {
			close(asking)
			<-ctx.Done() // an owner who never answers
			return ctx.Err()
		}})
		ag.Offer([]string{"a"})
		idle := dialAgent(t, ag.Path())
		is.Equal(listed(is, idle), fingerprints(a.Public))
		waiting := dialAgent(t, ag.Path())
		done := make(chan error, 1)
		go func() { _, err := waiting.Sign(a.Public, []byte("data")); done <- err }()
		wait(t, asking, "the agent to ask")
		closed := make(chan error, 1)
		go func() { closed <- ag.Close() }()
		select {
		case err := <-closed:
			is.NoErr(err) // Close ends the wait for the owner and returns
		case <-time.After(vaultTimeout):
			t.Fatal("Close waited on the owner")
		}
		is.True(<-done != nil) // the waiting signature failed
		_, err := os.Lstat(ag.Path())
		is.True(errors.Is(err, fs.ErrNotExist)) // the socket is gone
		_, err = idle.List()
		is.True(err != nil) // an open connection ended
		_, err = net.Dial("unix", ag.Path())
		is.True(err != nil)  // no new one
		is.NoErr(ag.Close()) // closing twice does nothing
	})

	t.Run("AnOccupiedPathIsRefused", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		path := filepath.Join(agentDir(t), "agent.sock")
		is.NoErr(os.WriteFile(path, []byte("mine"), 0o600))
		_, err := v.ServeAgent(hub.AgentOptions{Path: path})
		is.True(err != nil) // refused
		got, err := os.ReadFile(path)
		is.NoErr(err)
		is.Equal(string(got), "mine") // and left alone
	})

	t.Run("EachSessionsAgentLendsOnlyItsOwnOffer", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, b, _, _ := sshFixtures(t)
		importUnlocked(t, v, "a", a.OpenSSH)
		importUnlocked(t, v, "b", b.OpenSSH)
		one, two := serveAgent(t, v, hub.AgentOptions{}), serveAgent(t, v, hub.AgentOptions{})
		one.Offer([]string{"a"})
		two.Offer([]string{"b"})
		is.Equal(listed(is, dialAgent(t, one.Path())), fingerprints(a.Public)) // one lends a
		is.Equal(listed(is, dialAgent(t, two.Path())), fingerprints(b.Public)) // two lends b
	})
}

// importUnlocked imports an unprotected SSH key as credential id and
// unlocks it.
func importUnlocked(t *testing.T, v hub.KeyVault, id string, key []byte) hub.NewKey {
	t.Helper()
	k, err := v.ImportSSH(key, nil)
	if err != nil {
		t.Fatalf("import %s: %v", id, err)
	}
	if err := v.Unlock(id, hub.CredentialSSH, k.Sealed, nil); err != nil {
		t.Fatalf("unlock %s: %v", id, err)
	}
	return k
}

// serveAgent serves an agent on a fresh socket, closed at the end.
func serveAgent(t *testing.T, v hub.KeyVault, opts hub.AgentOptions) hub.CredentialAgent {
	t.Helper()
	opts.Path = filepath.Join(agentDir(t), "agent.sock")
	ag, err := v.ServeAgent(opts)
	if err != nil {
		t.Fatalf("serve agent: %v", err)
	}
	if ag.Path() != opts.Path {
		t.Fatalf("agent at %s, want %s", ag.Path(), opts.Path)
	}
	t.Cleanup(func() { ag.Close() })
	return ag
}

// dialAgent connects an agent client to path, every exchange bounded.
func dialAgent(t *testing.T, path string) agent.ExtendedAgent {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial agent: %v", err)
	}
	c.SetDeadline(time.Now().Add(vaultTimeout))
	t.Cleanup(func() { c.Close() })
	return agent.NewClient(c)
}

// listed returns the sorted fingerprints an agent lists.
func listed(is *is.I, cl agent.ExtendedAgent) []string {
	keys, err := cl.List()
	is.NoErr(err) // the agent lists
	out := []string{}
	for _, k := range keys {
		pub, err := ssh.ParsePublicKey(k.Blob)
		is.NoErr(err) // a public key
		out = append(out, ssh.FingerprintSHA256(pub))
	}
	slices.Sort(out)
	return out
}

func fingerprints(keys ...ssh.PublicKey) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, ssh.FingerprintSHA256(k))
	}
	slices.Sort(out)
	return out
}

func sortedStrings(s ...string) []string { slices.Sort(s); return s }

// sshsigBlob is what ssh-keygen -Y sign -n git asks an agent to sign
// for message (PROTOCOL.sshsig).
func sshsigBlob(message []byte) []byte {
	h := sha512.Sum512(message)
	return append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, HashAlgorithm string
		Hash                               []byte
	}{"git", "", "sha512", h[:]})...)
}

// wait waits for c to close, bounded.
func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(vaultTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}
