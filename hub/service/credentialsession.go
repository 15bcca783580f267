package service

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// What a workspace session is lent. A start reads, under its workspace's
// lock, what the workspace has assigned and builds the session's
// projection (hub.SessionCredentials) and its grant: the record of what
// was lent, for revocation (holders) and for credentialRestartRequired,
// and the session's broker, which answers its agent, credential helper
// and signing program by reading the catalog as it is at each request.

// grant is what one running session was lent, and its broker.
type grant struct {
	h  *Hub
	ws string
	// policy is the workspace whose assignments the session follows: ws,
	// or the main workspace of a linked worktree (credentialPolicyOf).
	policy string
	// ids are the credentials the session was given (its projection's).
	ids []string
	// revision is its projection's revision at start.
	revision string

	mu    sync.Mutex
	agent hub.CredentialAgent // once the backend asked for it
	ended bool
	once  map[string]bool // ask-once uses allowed in this session
}

// sessionGrants are the grants of the running sessions, by workspace.
type sessionGrants struct {
	mu sync.Mutex
	by map[string]*grant
}

func (s *sessionGrants) put(g *grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*grant{}
	}
	s.by[g.ws] = g
}

// end forgets g, if it is still ws's, and refuses its broker from now on.
func (s *sessionGrants) end(g *grant) {
	s.mu.Lock()
	if s.by[g.ws] == g {
		delete(s.by, g.ws)
	}
	s.mu.Unlock()
	g.mu.Lock()
	g.ended, g.agent = true, nil
	g.mu.Unlock()
}

func (s *sessionGrants) get(ws string) *grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[ws]
}

// all returns every grant.
func (s *sessionGrants) all() []*grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*grant, 0, len(s.by))
	for _, g := range s.by {
		out = append(out, g)
	}
	return out
}

// lent reports whether ws's running session was given credential id.
func (s *sessionGrants) lent(ws, id string) bool {
	g := s.get(ws)
	return g != nil && slices.Contains(g.ids, id)
}

// holding returns the workspaces whose running session was given id.
func (s *sessionGrants) holding(id string) []string {
	var out []string
	for _, g := range s.all() {
		if slices.Contains(g.ids, id) {
			out = append(out, g.ws)
		}
	}
	return out
}

// lend builds what workspace ws's new session is lent, and its grant
// (not yet registered: the start puts it once the session runs). The
// caller holds ws's lock. Tools the projection runs are probed now, so
// the session gets their current paths.
func (h *Hub) lend(ctx context.Context, ws string) (hub.SessionCredentials, *grant, error) {
	cat, digests, _, err := h.catalog(ctx)
	if err != nil {
		return hub.SessionCredentials{}, nil, hub.Wrap(hub.Internal, err, "credentials could not be read")
	}
	g := &grant{h: h, ws: ws, policy: h.credentialPolicyOf(ctx, ws)}
	var sc hub.SessionCredentials
	assigned := cat.WorkspaceAssignments(g.policy)
	var lent []hub.Credential
	for _, a := range assigned {
		c, ok := cat.Credential(a.CredentialID)
		if !ok || !c.Enabled {
			continue // a disabled credential is lent nothing; enabling it needs a restart
		}
		if !slices.ContainsFunc(lent, func(x hub.Credential) bool { return x.ID == c.ID }) {
			lent = append(lent, c)
		}
		switch {
		case a.Role == hub.RoleSigning:
			sc.Signing = &hub.SessionSigning{CredentialID: c.ID, Type: c.Type, PublicKey: c.PublicKey, Fingerprint: c.Fingerprint}
		case c.Type == hub.CredentialSSH:
			sc.Logins = append(sc.Logins, hub.SessionLogin{Host: a.Host, CredentialID: c.ID, Type: c.Type, PublicKey: c.PublicKey})
		case c.Type == hub.CredentialToken:
			if credential.Has(c, hub.CapHTTPSGit) {
				sc.Logins = append(sc.Logins, hub.SessionLogin{Host: a.Host, CredentialID: c.ID, Type: c.Type, HTTPS: true})
			}
			if err := h.lendCLIToken(ctx, &sc, c); err != nil {
				return hub.SessionCredentials{}, nil, err
			}
		}
	}
	slices.SortFunc(sc.Logins, func(a, b hub.SessionLogin) int { return strings.Compare(a.Host, b.Host) })
	g.ids = credentialIDs(lent)
	paths := h.toolPaths.refresh(ctx, h, credential.ToolsUsed(assigned, lent))
	sc.Tools = map[hub.CredentialToolName]string{}
	for t, p := range paths {
		if p != "" {
			sc.Tools[t] = p
		}
	}
	g.revision = cat.Project(g.policy, digests, h.toolPaths.of(hub.CredentialTools())).Revision()
	if !sc.Empty() {
		sc.Broker = g
	}
	return sc, g, nil
}

// lendCLIToken adds a token's value for the provider CLIs it serves.
func (h *Hub) lendCLIToken(ctx context.Context, sc *hub.SessionCredentials, c hub.Credential) error {
	var tools []hub.CredentialToolName
	if credential.Has(c, hub.CapGitHubCLI) {
		tools = append(tools, hub.ToolGH)
	}
	if credential.Has(c, hub.CapGitLabCLI) {
		tools = append(tools, hub.ToolGLab)
	}
	if len(tools) == 0 {
		return nil
	}
	sealed, err := h.secret(ctx, c.ID)
	if err != nil {
		return err
	}
	token, err := h.vault.OpenToken(sealed)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "a token assigned to the workspace could not be opened")
	}
	for _, t := range tools {
		sc.CLITokens = append(sc.CLITokens, hub.SessionCLIToken{Tool: t, Host: c.Host, CredentialID: c.ID, Token: token})
	}
	return nil
}

// restartRequired answers a workspace's credentialRestartRequired: its
// running session's projection at start differs from what it would be
// given now.
func (h *Hub) restartRequired(ctx context.Context, ws string) bool {
	g := h.grants.get(ws)
	if g == nil {
		return false
	}
	cat, digests, _, err := h.catalog(ctx)
	if err != nil {
		return true
	}
	now := cat.Project(g.policy, digests, h.toolPaths.of(hub.CredentialTools())).Revision()
	return credential.RestartRequired(true, g.revision, now)
}

// reoffer has every running session's agent offer exactly its
// workspace's assigned, enabled SSH keys (the vault adds: unlocked).
func (h *Hub) reoffer() {
	for _, g := range h.grants.all() {
		g.offer()
	}
}

// offer updates g's agent, if it has one, from the cached catalog.
func (g *grant) offer() {
	g.mu.Lock()
	agent := g.agent
	g.mu.Unlock()
	if agent == nil {
		return
	}
	agent.Offer(g.offered(context.Background()))
}

// offered are the SSH keys g's agent may use now: the workspace's
// assigned, enabled ones.
func (g *grant) offered(ctx context.Context) []string {
	cat, _, _, err := g.h.catalog(ctx)
	if err != nil {
		return nil
	}
	var ids []string
	for _, a := range cat.WorkspaceAssignments(g.policy) {
		c, ok := cat.Credential(a.CredentialID)
		if ok && c.Enabled && c.Type == hub.CredentialSSH && !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}
