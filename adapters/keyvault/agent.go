package keyvault

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/hub"
)

// Bounds on one session's agent.
const (
	// maxAgentConns bounds the connections open at once; more are
	// closed as they arrive.
	maxAgentConns = 32
	// maxAgentRequest bounds one request, as OpenSSH's agent does.
	maxAgentRequest = 256 << 10
)

// sshsigPreamble starts every blob ssh-keygen -Y sign asks an agent to
// sign (PROTOCOL.sshsig); a login's blob starts with the session
// identifier's length instead, never these bytes.
var sshsigPreamble = []byte("SSHSIG")

// errQuiet is every refusal of a session's agent: the agent library's
// own "locked" error, which its server answers with a failure without
// logging (it logs any other error), so a workspace cannot fill the Hub's
// log through its socket. The library keeps it unexported; a locked
// keyring hands it over.
var errQuiet = func() error {
	k := agent.NewKeyring()
	if err := k.Lock([]byte("x")); err != nil {
		panic(err)
	}
	_, err := k.Signers()
	if err == nil {
		panic("keyvault: a locked keyring lists its signers")
	}
	return err
}()

// ServeAgent serves one session's agent on a new socket (hub.KeyVault).
// The socket's folder must be private (this user's, closed to group and
// others), as a session's runtime folder is; any other is refused.
func (v *Vault) ServeAgent(opts hub.AgentOptions) (hub.CredentialAgent, error) {
	if err := privateDir(filepath.Dir(opts.Path)); err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the session's agent could not be served")
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: opts.Path, Net: "unix"})
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the session's agent could not be served")
	}
	// The folder is private, so the moment between bind and chmod lets no
	// one in; the mode says so to those who look.
	if err := os.Chmod(opts.Path, 0o600); err != nil {
		l.Close()
		return nil, hub.Wrap(hub.Internal, err, "the session's agent could not be served")
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &sessionAgent{vault: v, path: opts.Path, onUse: opts.OnUse, l: l, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	a.wg.Add(1)
	go a.accept()
	return a, nil
}

// privateDir checks that dir is a directory of this user's, closed to
// group and others.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a private directory (mode %v)", dir, fi.Mode())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by another user", dir)
	}
	return nil
}

// sessionAgent is one session's agent: an agent.ExtendedAgent over the
// vault's unlocked keys, filtered by what the session is offered.
type sessionAgent struct {
	vault  *Vault
	path   string
	onUse  func(context.Context, hub.CredentialUse) error
	l      *net.UnixListener
	ctx    context.Context // ends at Close, and with it every OnUse wait
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	offered []string
	conns   map[net.Conn]struct{}
	closed  bool
}

var _ agent.ExtendedAgent = (*sessionAgent)(nil)

// Path returns the agent's socket (hub.CredentialAgent).
func (a *sessionAgent) Path() string { return a.path }

// Offer replaces the credentials the agent lends (hub.CredentialAgent);
// the next request sees the new set.
func (a *sessionAgent) Offer(ids []string) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	a.mu.Lock()
	a.offered = ids
	a.mu.Unlock()
}

// Close stops accepting, removes the socket, ends every connection and
// every wait for the owner, and returns once they are all done
// (hub.CredentialAgent).
func (a *sessionAgent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	conns := make([]net.Conn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	a.cancel()
	err := a.l.Close() // removes the socket
	for _, c := range conns {
		c.Close()
	}
	a.wg.Wait()
	return err
}

func (a *sessionAgent) accept() {
	defer a.wg.Done()
	for {
		c, err := a.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // out of descriptors, say: wait a little, or for Close
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		a.mu.Lock()
		if a.closed || len(a.conns) >= maxAgentConns {
			a.mu.Unlock()
			c.Close()
			continue
		}
		a.conns[c] = struct{}{}
		a.wg.Add(1)
		a.mu.Unlock()
		go a.serve(c)
	}
}

func (a *sessionAgent) serve(c net.Conn) {
	defer a.wg.Done()
	_ = agent.ServeAgent(a, &requestReader{Conn: c})
	c.Close()
	a.mu.Lock()
	delete(a.conns, c)
	a.mu.Unlock()
}

// requestReader hands the agent library one whole request at a time,
// read and checked here: a request longer than maxAgentRequest ends the
// connection, and any request but a well-formed listing or signing one
// is answered with a failure right here (the library is waiting for its
// next request then, so the replies stay in order). The library thus
// never parses what a client sends to add or change keys, and never
// meets a malformed request it would log.
type requestReader struct {
	net.Conn
	pending []byte
}

// agentFailure is the reply SSH_AGENT_FAILURE.
var agentFailure = []byte{0, 0, 0, 1, 5}

func (r *requestReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		var head [4]byte
		if _, err := io.ReadFull(r.Conn, head[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(head[:])
		if n == 0 || n > maxAgentRequest {
			return 0, fmt.Errorf("agent: request of %d bytes", n)
		}
		msg := make([]byte, 4+n)
		copy(msg, head[:])
		if _, err := io.ReadFull(r.Conn, msg[4:]); err != nil {
			return 0, err
		}
		if admissible(msg[4:]) {
			r.pending = msg
		} else if _, err := r.Conn.Write(agentFailure); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// admissible reports whether req is a request to list keys or a
// well-formed request to sign (PROTOCOL.agent 3.2, 3.6).
func admissible(req []byte) bool {
	const requestIdentities = 11
	if req[0] == requestIdentities {
		return true
	}
	var sign struct {
		KeyBlob []byte `sshtype:"13"`
		Data    []byte
		Flags   uint32
	}
	var key struct {
		Format string
		Rest   []byte `ssh:"rest"`
	}
	return ssh.Unmarshal(req, &sign) == nil && ssh.Unmarshal(sign.KeyBlob, &key) == nil
}

// offeredKeys returns the unlocked SSH keys among those offered, with
// their credential ids, as of now.
func (a *sessionAgent) offeredKeys() ([]string, []*heldKey) {
	a.mu.Lock()
	ids := a.offered
	a.mu.Unlock()
	var outIDs []string
	var keys []*heldKey
	for _, id := range ids {
		if h := a.vault.lookup(id); h != nil && h.typ == hub.CredentialSSH {
			outIDs, keys = append(outIDs, id), append(keys, h)
		}
	}
	return outIDs, keys
}

// find returns the offered unlocked key whose public key is blob.
func (a *sessionAgent) find(blob []byte) (string, *heldKey) {
	ids, keys := a.offeredKeys()
	for i, h := range keys {
		if bytes.Equal(h.blob, blob) {
			return ids[i], h
		}
	}
	return "", nil
}

// List lists the offered unlocked keys, each with its credential's id
// as comment.
func (a *sessionAgent) List() ([]*agent.Key, error) {
	ids, keys := a.offeredKeys()
	out := make([]*agent.Key, len(keys))
	for i, h := range keys {
		pub, err := ssh.ParsePublicKey(h.blob)
		if err != nil {
			return nil, err
		}
		out[i] = &agent.Key{Format: pub.Type(), Blob: h.blob, Comment: ids[i]}
	}
	return out, nil
}

// Sign is SignWithFlags without flags.
func (a *sessionAgent) Sign(key ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.SignWithFlags(key, data, 0)
}

// SignWithFlags signs with an offered unlocked key once OnUse allows it;
// the key must still be offered and unlocked when the answer comes.
func (a *sessionAgent) SignWithFlags(key ssh.PublicKey, data []byte, flags agent.SignatureFlags) (*ssh.Signature, error) {
	blob := key.Marshal()
	id, h := a.find(blob)
	if h == nil {
		return nil, errQuiet
	}
	if a.onUse != nil {
		purpose := hub.PurposeSSHLogin
		if bytes.HasPrefix(data, sshsigPreamble) {
			purpose = hub.PurposeSignature
		}
		ctx, cancel := context.WithTimeout(a.ctx, a.vault.useTimeout)
		err := a.onUse(ctx, hub.CredentialUse{CredentialID: id, Purpose: purpose, At: a.vault.clock.Now()})
		cancel()
		if err != nil {
			return nil, errQuiet
		}
		// The owner may have taken long: the key must still be lent.
		var again string
		if again, h = a.find(blob); again != id || h == nil {
			return nil, errQuiet
		}
	}
	var sig *ssh.Signature
	err := h.use(func() error {
		var err error
		sig, err = signSSH(h.signer, data, flags)
		return err
	})
	if err != nil {
		return nil, errQuiet // locked meanwhile, or a key type the flags do not fit
	}
	return sig, nil
}

// signSSH signs data; for an RSA key, flags choose rsa-sha2-256 or -512
// over the old ssh-rsa, and other keys ignore them, as OpenSSH's agent
// does.
func signSSH(s ssh.Signer, data []byte, flags agent.SignatureFlags) (*ssh.Signature, error) {
	as, ok := s.(ssh.AlgorithmSigner)
	if !ok || s.PublicKey().Type() != ssh.KeyAlgoRSA {
		return s.Sign(rand.Reader, data)
	}
	switch {
	case flags&agent.SignatureFlagRsaSha512 != 0:
		return as.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA512)
	case flags&agent.SignatureFlagRsaSha256 != 0:
		return as.SignWithAlgorithm(rand.Reader, data, ssh.KeyAlgoRSASHA256)
	}
	return s.Sign(rand.Reader, data)
}

// Refused: the agent lends keys; it never changes or exports them.

func (a *sessionAgent) Add(agent.AddedKey) error       { return errQuiet }
func (a *sessionAgent) Remove(ssh.PublicKey) error     { return errQuiet }
func (a *sessionAgent) RemoveAll() error               { return errQuiet }
func (a *sessionAgent) Lock([]byte) error              { return errQuiet }
func (a *sessionAgent) Unlock([]byte) error            { return errQuiet }
func (a *sessionAgent) Signers() ([]ssh.Signer, error) { return nil, errQuiet }
func (a *sessionAgent) Extension(string, []byte) ([]byte, error) {
	return nil, agent.ErrExtensionUnsupported
}
