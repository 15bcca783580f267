package fakes

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/hub"
)

// useTimeout bounds each OnUse call, as the real vault's default does.
const useTimeout = 2 * time.Minute

// errFakeAgent is the agent library's own "locked" error, which its server
// answers without logging, as the real vault does.
var errFakeAgent = func() error {
	k := agent.NewKeyring()
	_ = k.Lock([]byte("x"))
	_, err := k.Signers()
	return err
}()

// ServeAgent serves an agent on a real Unix socket at opts.Path that
// lends the offered unlocked keys, as the real vault's does (without its
// bounds on connections and request sizes).
func (v *KeyVault) ServeAgent(opts hub.AgentOptions) (hub.CredentialAgent, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: opts.Path, Net: "unix"})
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the session's agent could not be served")
	}
	if err := os.Chmod(opts.Path, 0o600); err != nil {
		l.Close()
		return nil, hub.Wrap(hub.Internal, err, "the session's agent could not be served")
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeAgent{v: v, path: opts.Path, onUse: opts.OnUse, l: l, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}}
	a.wg.Add(1)
	go a.accept()
	return a, nil
}

// fakeAgent is one session's agent of the fake vault.
type fakeAgent struct {
	v      *KeyVault
	path   string
	onUse  func(context.Context, hub.CredentialUse) error
	l      *net.UnixListener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	offered []string
	conns   map[net.Conn]bool
	closed  bool
}

func (a *fakeAgent) Path() string { return a.path }

func (a *fakeAgent) Offer(ids []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.offered = slices.Clone(ids)
}

func (a *fakeAgent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	for c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.cancel()
	err := a.l.Close()
	a.wg.Wait()
	return err
}

func (a *fakeAgent) accept() {
	defer a.wg.Done()
	for {
		c, err := a.l.Accept()
		if err != nil {
			return
		}
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			c.Close()
			continue
		}
		a.conns[c] = true
		a.wg.Add(1)
		a.mu.Unlock()
		go func() {
			defer a.wg.Done()
			_ = agent.ServeAgent(a, c)
			c.Close()
			a.mu.Lock()
			delete(a.conns, c)
			a.mu.Unlock()
		}()
	}
}

// find returns the offered unlocked SSH keys, or the one whose public
// key is blob when blob is set.
func (a *fakeAgent) find(blob []byte) (ids []string, keys []*vaultKey) {
	a.mu.Lock()
	offered := a.offered
	a.mu.Unlock()
	for _, id := range offered {
		if k := a.v.key(id); k != nil && k.typ == hub.CredentialSSH && (blob == nil || bytes.Equal(k.blob, blob)) {
			ids, keys = append(ids, id), append(keys, k)
		}
	}
	return ids, keys
}

func (a *fakeAgent) List() ([]*agent.Key, error) {
	ids, keys := a.find(nil)
	out := make([]*agent.Key, len(keys))
	for i, k := range keys {
		out[i] = &agent.Key{Format: k.signer.PublicKey().Type(), Blob: k.blob, Comment: ids[i]}
	}
	return out, nil
}

func (a *fakeAgent) Sign(key ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.SignWithFlags(key, data, 0)
}

func (a *fakeAgent) SignWithFlags(key ssh.PublicKey, data []byte, flags agent.SignatureFlags) (*ssh.Signature, error) {
	ids, _ := a.find(key.Marshal())
	if len(ids) == 0 {
		return nil, errFakeAgent
	}
	if a.onUse != nil {
		purpose := hub.PurposeSSHLogin
		if bytes.HasPrefix(data, []byte("SSHSIG")) {
			purpose = hub.PurposeSignature
		}
		ctx, cancel := context.WithTimeout(a.ctx, useTimeout)
		err := a.onUse(ctx, hub.CredentialUse{CredentialID: ids[0], Purpose: purpose, At: a.v.clock.Now()})
		cancel()
		if err != nil {
			return nil, errFakeAgent
		}
	}
	again, keys := a.find(key.Marshal())
	if len(again) == 0 || again[0] != ids[0] {
		return nil, errFakeAgent
	}
	s, ok := keys[0].signer.(ssh.AlgorithmSigner)
	switch {
	case ok && key.Type() == ssh.KeyAlgoRSA && flags&agent.SignatureFlagRsaSha512 != 0:
		return s.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA512)
	case ok && key.Type() == ssh.KeyAlgoRSA && flags&agent.SignatureFlagRsaSha256 != 0:
		return s.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA256)
	}
	return keys[0].signer.Sign(rand.Reader, data)
}

func (a *fakeAgent) Add(agent.AddedKey) error       { return errFakeAgent }
func (a *fakeAgent) Remove(ssh.PublicKey) error     { return errFakeAgent }
func (a *fakeAgent) RemoveAll() error               { return errFakeAgent }
func (a *fakeAgent) Lock([]byte) error              { return errFakeAgent }
func (a *fakeAgent) Unlock([]byte) error            { return errFakeAgent }
func (a *fakeAgent) Signers() ([]ssh.Signer, error) { return nil, errFakeAgent }
func (a *fakeAgent) Extension(string, []byte) ([]byte, error) {
	return nil, agent.ErrExtensionUnsupported
}
