package service

import (
	"context"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// A grant is its session's broker (hub.SessionBroker): the session's
// agent, credential helper and signing program ask it, and it answers
// from the catalog as it is at that moment — an unassignment, a disable
// or a delete after the start is refused at the next request, without a
// restart. Every use passes its assignment's use policy (authorize,
// credentialuse.go) and is logged (credential, workspace, purpose, host,
// never a secret).

var _ hub.SessionBroker = (*grant)(nil)

var (
	errNothingLent = hub.Errorf(hub.NotFound, "no credential is available for this request")
	errSessionOver = hub.Errorf(hub.Unavailable, "the workspace session has ended")
)

// ServeAgent serves the session's SSH agent (hub.SessionBroker).
func (g *grant) ServeAgent(path string) (hub.CredentialAgent, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return nil, errSessionOver
	}
	if g.agent != nil {
		return nil, hub.Errorf(hub.Conflict, "the session's agent is already served")
	}
	agent, err := g.h.vault.ServeAgent(hub.AgentOptions{Path: path, OnUse: g.onUse})
	if err != nil {
		return nil, err
	}
	agent.Offer(g.offered(context.Background()))
	g.agent = agent
	return agent, nil
}

// onUse admits one signature of the session's agent: the key must still
// be assigned to the workspace and enabled (the vault checks it is
// unlocked and offered).
func (g *grant) onUse(ctx context.Context, u hub.CredentialUse) error {
	if err := g.live(); err != nil {
		return err
	}
	cat, _, _, err := g.h.catalog(ctx)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "credentials could not be read")
	}
	c, ok := cat.Credential(u.CredentialID)
	if !ok || !c.Enabled {
		return errNothingLent
	}
	a, ok := g.assignmentFor(cat, c.ID, u.Purpose, u.Host)
	if !ok {
		return errNothingLent // a login key asked to sign a commit, or the reverse
	}
	return g.authorize(ctx, a, u.Purpose, u.Host)
}

// Token answers git's credential helper (hub.SessionBroker).
func (g *grant) Token(ctx context.Context, host string) (string, []byte, error) {
	if err := g.live(); err != nil {
		return "", nil, err
	}
	host, err := credential.NormalizeHost(host)
	if err != nil {
		return "", nil, errNothingLent
	}
	cat, _, _, err := g.h.catalog(ctx)
	if err != nil {
		return "", nil, hub.Wrap(hub.Unavailable, err, "credentials could not be read")
	}
	for _, a := range cat.WorkspaceAssignments(g.policy) {
		if a.Role != hub.RoleAuthentication || a.Host != host {
			continue
		}
		c, ok := cat.Credential(a.CredentialID)
		if !ok || !c.Enabled || c.Type != hub.CredentialToken || !credential.Has(c, hub.CapHTTPSGit) || c.Host != host {
			return "", nil, errNothingLent
		}
		if err := g.authorize(ctx, a, hub.PurposeToken, host); err != nil {
			return "", nil, err
		}
		sealed, err := g.h.secret(ctx, c.ID)
		if err != nil {
			return "", nil, errNothingLent
		}
		token, err := g.h.vault.OpenToken(sealed)
		if err != nil {
			g.h.log.LogAttrs(ctx, slog.LevelError, "a token could not be opened", slog.String("credential", c.ID), slog.Any("err", err))
			return "", nil, errNothingLent
		}
		return credential.Username(c), token, nil
	}
	return "", nil, errNothingLent
}

// SignOpenPGP signs with the workspace's OpenPGP signing default
// (hub.SessionBroker).
func (g *grant) SignOpenPGP(ctx context.Context, data []byte) ([]byte, error) {
	if err := g.live(); err != nil {
		return nil, err
	}
	cat, _, _, err := g.h.catalog(ctx)
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "credentials could not be read")
	}
	for _, a := range cat.WorkspaceAssignments(g.policy) {
		if a.Role != hub.RoleSigning {
			continue
		}
		c, ok := cat.Credential(a.CredentialID)
		if !ok || !c.Enabled || c.Type != hub.CredentialOpenPGP {
			return nil, errNothingLent
		}
		if !g.h.vault.Unlocked(c.ID) {
			return nil, hub.Errorf(hub.Unavailable, "the OpenPGP key is locked")
		}
		if err := g.authorize(ctx, a, hub.PurposeSignature, ""); err != nil {
			return nil, err
		}
		return g.h.vault.SignOpenPGP(c.ID, data)
	}
	return nil, errNothingLent
}

// live refuses a request of a session that has ended.
// close ends a grant that served no session (a fetch): its broker
// refuses from now on.
func (g *grant) close() {
	g.mu.Lock()
	g.ended, g.agent = true, nil
	g.mu.Unlock()
}

func (g *grant) live() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return errSessionOver
	}
	return nil
}

// used logs one use of a credential by the session, at Debug: every use
// is in the credential's use log already (credentialuse.go), and a
// session signing in a loop must not fill the Hub's log.
func (g *grant) used(ctx context.Context, id string, purpose hub.CredentialPurpose, host string) {
	g.h.log.LogAttrs(ctx, slog.LevelDebug, "credential used", slog.String("credential", id),
		slog.String("workspace", g.ws), slog.String("purpose", string(purpose)), slog.String("host", host))
}
