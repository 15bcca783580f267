package fakes

import (
	"context"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.SessionBroker = (*SessionBroker)(nil)

// SessionBroker is a hub.SessionBroker for tests, over a KeyVault (this
// package's or the real one). It keeps its own table of what the session
// is lent — SSH keys, HTTPS tokens by host, the signing key — and checks
// every request against the table as it is at that moment, as the Hub's
// broker checks the workspace's assignments: Revoke takes a credential
// away from the live agents and from the next request at once, and once
// End is called every method fails. Every answered use is recorded
// (Uses). Safe for concurrent use.
type SessionBroker struct {
	vault hub.KeyVault
	clock hub.Clock

	mu      sync.Mutex
	ssh     []string // SSH credentials the agents offer
	tokens  map[string]BrokerToken
	signing string // the OpenPGP signing credential, "" for none
	agents  []hub.CredentialAgent
	uses    []hub.CredentialUse
	ended   bool
}

// BrokerToken is a token the broker hands out for one host.
type BrokerToken struct {
	CredentialID string
	Username     string
	// Sealed is the token sealed by the vault (KeyVault.SealToken).
	Sealed []byte
}

// NewSessionBroker returns a broker over vault that lends nothing yet.
func NewSessionBroker(vault hub.KeyVault, clock hub.Clock) *SessionBroker {
	return &SessionBroker{vault: vault, clock: clock, tokens: map[string]BrokerToken{}}
}

// LendSSH makes the agents offer the SSH credentials ids (replacing
// earlier ones).
func (b *SessionBroker) LendSSH(ids ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ssh = slices.Clone(ids)
	for _, a := range b.agents {
		a.Offer(b.ssh)
	}
}

// LendToken makes Token answer for host (normalized) with t.
func (b *SessionBroker) LendToken(host string, t BrokerToken) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens[host] = t
}

// LendSigning makes SignOpenPGP sign with credential id.
func (b *SessionBroker) LendSigning(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signing = id
}

// Revoke takes credential id away from the session, as an unassign,
// disable or delete does: from the agents at once, and from every later
// request.
func (b *SessionBroker) Revoke(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ssh = slices.DeleteFunc(b.ssh, func(s string) bool { return s == id })
	for _, a := range b.agents {
		a.Offer(b.ssh)
	}
	for host, t := range b.tokens {
		if t.CredentialID == id {
			delete(b.tokens, host)
		}
	}
	if b.signing == id {
		b.signing = ""
	}
}

// End makes every method fail from now on, as when the session has
// ended.
func (b *SessionBroker) End() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
}

// Uses returns the uses answered so far, in order.
func (b *SessionBroker) Uses() []hub.CredentialUse {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.uses)
}

// Agents returns the agents served so far (closed ones included).
func (b *SessionBroker) Agents() []hub.CredentialAgent {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.agents)
}

var errBrokerNothing = hub.Errorf(hub.NotFound, "no such credential is available to this session")

// ServeAgent serves the vault's agent at path, offering the lent SSH
// keys and recording each signature as a use.
func (b *SessionBroker) ServeAgent(path string) (hub.CredentialAgent, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return nil, hub.Errorf(hub.Unavailable, "the session has ended")
	}
	a, err := b.vault.ServeAgent(hub.AgentOptions{Path: path, OnUse: b.onUse})
	if err != nil {
		return nil, err
	}
	a.Offer(b.ssh)
	b.agents = append(b.agents, a)
	return a, nil
}

func (b *SessionBroker) onUse(_ context.Context, u hub.CredentialUse) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended || !slices.Contains(b.ssh, u.CredentialID) {
		return errBrokerNothing
	}
	b.uses = append(b.uses, u)
	return nil
}

// Token opens the token lent for host, when there is one.
func (b *SessionBroker) Token(ctx context.Context, host string) (string, []byte, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	b.mu.Lock()
	t, ok := b.tokens[host]
	ended := b.ended
	b.mu.Unlock()
	if ended || !ok {
		return "", nil, errBrokerNothing
	}
	token, err := b.vault.OpenToken(t.Sealed)
	if err != nil {
		return "", nil, err
	}
	b.record(hub.CredentialUse{CredentialID: t.CredentialID, Purpose: hub.PurposeToken, Host: host})
	return t.Username, token, nil
}

// SignOpenPGP signs with the lent signing key, when there is one.
func (b *SessionBroker) SignOpenPGP(ctx context.Context, data []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	id, ended := b.signing, b.ended
	b.mu.Unlock()
	if ended || id == "" {
		return nil, errBrokerNothing
	}
	sig, err := b.vault.SignOpenPGP(id, data)
	if err != nil {
		return nil, err
	}
	b.record(hub.CredentialUse{CredentialID: id, Purpose: hub.PurposeSignature})
	return sig, nil
}

func (b *SessionBroker) record(u hub.CredentialUse) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u.At = b.clock.Now()
	b.uses = append(b.uses, u)
}
