package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// cloneBroker answers a clone's git for the one credential the job
// selected, for the clone's host only, checked live as a session's broker
// checks (credentialbroker.go): a credential disabled, locked or deleted
// meanwhile is refused at the next request.
type cloneBroker struct {
	h    *Hub
	id   string
	host string
}

var _ hub.SessionBroker = (*cloneBroker)(nil)

// ServeAgent serves the clone's agent, offering the selected key alone.
func (b *cloneBroker) ServeAgent(path string) (hub.CredentialAgent, error) {
	agent, err := b.h.vault.ServeAgent(hub.AgentOptions{Path: path, OnUse: b.onUse})
	if err != nil {
		return nil, err
	}
	agent.Offer([]string{b.id})
	return agent, nil
}

// onUse admits a login with the selected key while it is enabled; it
// signs nothing else.
func (b *cloneBroker) onUse(ctx context.Context, u hub.CredentialUse) error {
	c, err := b.credential(ctx)
	if err != nil || u.CredentialID != b.id || u.Purpose != hub.PurposeSSHLogin {
		return errNothingLent
	}
	b.h.uses.log(c.ID, hub.CredentialUseRecord{At: b.h.clock.Now().UTC(), Purpose: u.Purpose, Host: b.host, Outcome: hub.UseAllowedByPolicy})
	return nil
}

// Token answers git's credential helper for the clone's host only.
func (b *cloneBroker) Token(ctx context.Context, host string) (string, []byte, error) {
	host, err := credential.NormalizeHost(host)
	if err != nil || host != b.host {
		return "", nil, errNothingLent
	}
	c, err := b.credential(ctx)
	if err != nil || c.Type != hub.CredentialToken || !credential.Has(c, hub.CapHTTPSGit) || c.Host != host {
		return "", nil, errNothingLent
	}
	sealed, err := b.h.secret(ctx, c.ID)
	if err != nil {
		return "", nil, errNothingLent
	}
	token, err := b.h.vault.OpenToken(sealed)
	if err != nil {
		return "", nil, errNothingLent
	}
	b.h.uses.log(c.ID, hub.CredentialUseRecord{At: b.h.clock.Now().UTC(), Purpose: hub.PurposeToken, Host: host, Outcome: hub.UseAllowedByPolicy})
	return credential.Username(c), token, nil
}

// SignOpenPGP: a clone signs nothing.
func (b *cloneBroker) SignOpenPGP(context.Context, []byte) ([]byte, error) {
	return nil, errNothingLent
}

// credential is the selected credential as it is now, enabled.
func (b *cloneBroker) credential(ctx context.Context) (hub.Credential, error) {
	cat, _, _, err := b.h.catalog(ctx)
	if err != nil {
		return hub.Credential{}, err
	}
	c, ok := cat.Credential(b.id)
	if !ok || !c.Enabled {
		return hub.Credential{}, errNothingLent
	}
	return c, nil
}
