package service

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// Every use seen, and approved where the owner asks. Each use of a
// credential by a session — a login through its agent, a signature, a
// token handed to git — passes authorize, which applies the assignment's
// use policy: always allowed, asked once per purpose and session, or
// asked every time. A use that needs approval is held (approvals, bounded
// in number and in time) until the owner allows or denies it; every use,
// whatever became of it, goes into the credential's use log, bounded and
// kept in memory (a restart empties it). Neither holds a secret.

// The bounds of approvals and use logs.
const (
	// MaxPendingApprovals bounds the uses held at once, Hub-wide: a
	// session that floods requests is refused at once beyond it, and the
	// owner's list stays readable.
	MaxPendingApprovals = 64
	// ApprovalWait bounds how long a held use waits for its owner (the
	// vault's agents bound their OnUse the same).
	ApprovalWait = 2 * time.Minute
	// MaxUsesLogged is how many uses each credential's log keeps, the
	// newest.
	MaxUsesLogged = 200
)

// useGate holds the pending approvals and the use logs.
type useGate struct {
	mu      sync.Mutex
	pending map[string]*approval
	logs    map[string][]hub.CredentialUseRecord // by credential id, oldest first
}

// approval is one held use.
type approval struct {
	hub.CredentialApproval
	decided chan struct{} // closed once allowed or denied
	allowed bool
	by      string
}

// authorize applies assignment a's use policy to one use by g's session,
// logging it: nil allows it. A held use waits within ctx and ApprovalWait.
func (g *grant) authorize(ctx context.Context, a hub.CredentialAssignment, purpose hub.CredentialPurpose, host string) error {
	h := g.h
	rec := hub.CredentialUseRecord{At: h.clock.Now().UTC(), WorkspaceID: g.ws, Purpose: purpose, Host: host}
	onceKey := a.CredentialID + "\x00" + string(purpose) + "\x00" + host
	switch {
	case a.Policy == hub.PolicyAlways || a.Policy == "":
		rec.Outcome = hub.UseAllowedByPolicy
	case a.Policy == hub.PolicyAskOnce && g.allowedOnce(onceKey):
		rec.Outcome = hub.UseAllowedEarlier
	default:
		rec.Outcome, rec.By = h.hold(ctx, hub.CredentialApproval{WorkspaceID: g.ws, CredentialID: a.CredentialID, Purpose: purpose, Host: host})
		if rec.Outcome == hub.UseAllowed && a.Policy == hub.PolicyAskOnce {
			g.allowOnce(onceKey)
		}
	}
	h.uses.log(a.CredentialID, rec)
	g.used(ctx, a.CredentialID, purpose, host)
	allowed := rec.Outcome == hub.UseAllowedByPolicy || rec.Outcome == hub.UseAllowedEarlier || rec.Outcome == hub.UseAllowed
	h.counters.credentialUsed(purpose, allowed)
	switch {
	case allowed:
		return nil
	case rec.Outcome == hub.UseRefused:
		return hub.Errorf(hub.Unavailable, "too many credential uses are waiting for approval")
	}
	return hub.Errorf(hub.Forbidden, "the credential's use was not approved")
}

// hold registers a use for approval and waits for its answer, ctx's end
// or ApprovalWait, whichever comes first.
func (h *Hub) hold(ctx context.Context, req hub.CredentialApproval) (hub.UseOutcome, string) {
	req.ID, req.RequestedAt = uuid.NewString(), h.clock.Now().UTC()
	ap := &approval{CredentialApproval: req, decided: make(chan struct{})}
	// The wait starts before the use is listed: whoever sees it listed
	// sees its deadline running.
	expired := make(chan struct{})
	t := h.clock.AfterFunc(ApprovalWait, func() { close(expired) })
	defer t.Stop()
	if !h.uses.add(ap) {
		return hub.UseRefused, ""
	}
	defer h.uses.remove(ap.ID)
	// A held use keeps its session from being stopped as idle: the use
	// would fail with it.
	h.idle.holding(req.WorkspaceID, true)
	defer h.idle.holding(req.WorkspaceID, false)
	// The owner may be away: the held use is a needsAnswer notification
	// of the workspace, resolved however the wait ends.
	h.push.announce(req.WorkspaceID, hub.Notification{ID: "credential-use:" + req.ID, SourceID: req.ID,
		Kind: hub.NotifyCredentialApproval, CreatedAt: req.RequestedAt})
	defer h.push.announceResolved(req.WorkspaceID, "credential-use:"+req.ID)
	select {
	case <-ap.decided:
		if ap.allowed {
			return hub.UseAllowed, ap.by
		}
		return hub.UseDenied, ap.by
	case <-ctx.Done():
	case <-expired:
	}
	return hub.UseTimedOut, ""
}

func (u *useGate) add(ap *approval) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.pending) >= MaxPendingApprovals {
		return false
	}
	if u.pending == nil {
		u.pending = map[string]*approval{}
	}
	u.pending[ap.ID] = ap
	return true
}

func (u *useGate) remove(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.pending, id)
}

// log appends rec to credential id's log, dropping the oldest beyond the
// bound.
func (u *useGate) log(id string, rec hub.CredentialUseRecord) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.logs == nil {
		u.logs = map[string][]hub.CredentialUseRecord{}
	}
	l := append(u.logs[id], rec)
	if len(l) > MaxUsesLogged {
		l = slices.Clone(l[len(l)-MaxUsesLogged:])
	}
	u.logs[id] = l
}

// forget drops credential id's log: it was deleted.
func (u *useGate) forget(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.logs, id)
}

// CredentialApprovals lists the uses waiting for their owner, oldest
// first.
func (h *Hub) CredentialApprovals(ctx context.Context) []hub.CredentialApproval {
	h.uses.mu.Lock()
	out := make([]hub.CredentialApproval, 0, len(h.uses.pending))
	for _, ap := range h.uses.pending {
		out = append(out, ap.CredentialApproval)
	}
	h.uses.mu.Unlock()
	slices.SortFunc(out, func(a, b hub.CredentialApproval) int { return a.RequestedAt.Compare(b.RequestedAt) })
	if cat, _, _, err := h.catalog(ctx); err == nil {
		for i := range out {
			if c, ok := cat.Credential(out[i].CredentialID); ok {
				out[i].CredentialName = c.Name
			}
		}
	}
	return out
}

// DecideCredentialApproval allows or denies a held use, as caller. A use
// no longer waiting (answered, timed out, its session gone) is NotFound.
func (h *Hub) DecideCredentialApproval(ctx context.Context, caller hub.DeviceSession, id string, allow bool) error {
	h.uses.mu.Lock()
	ap, ok := h.uses.pending[id]
	if ok {
		delete(h.uses.pending, id)
	}
	h.uses.mu.Unlock()
	if !ok {
		return hub.Errorf(hub.NotFound, "unknown approval: %s", id)
	}
	ap.allowed, ap.by = allow, caller.User
	close(ap.decided)
	return nil
}

// CredentialUses returns credential id's use log, newest first.
func (h *Hub) CredentialUses(ctx context.Context, id string) ([]hub.CredentialUseRecord, error) {
	if _, err := h.Credential(ctx, id); err != nil {
		return nil, err
	}
	h.uses.mu.Lock()
	out := slices.Clone(h.uses.logs[id])
	h.uses.mu.Unlock()
	slices.Reverse(out)
	return out, nil
}

// allowedOnce reports whether key was allowed earlier in g's session.
func (g *grant) allowedOnce(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.once[key]
}

func (g *grant) allowOnce(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.once == nil {
		g.once = map[string]bool{}
	}
	g.once[key] = true
}

// assignmentFor finds the assignment of credential id in g's workspace
// that a use for purpose (and host) is made under: the signing default
// for a signature, the authentication default for host for a token, and
// for a login, the strictest of the key's authentication defaults (the
// agent does not know the host).
func (g *grant) assignmentFor(cat credential.Catalog, id string, purpose hub.CredentialPurpose, host string) (hub.CredentialAssignment, bool) {
	var found hub.CredentialAssignment
	ok := false
	for _, a := range cat.WorkspaceAssignments(g.policy) {
		if a.CredentialID != id {
			continue
		}
		switch {
		case purpose == hub.PurposeSignature && a.Role == hub.RoleSigning,
			purpose == hub.PurposeToken && a.Role == hub.RoleAuthentication && a.Host == host:
			return a, true
		case purpose == hub.PurposeSSHLogin && a.Role == hub.RoleAuthentication:
			if !ok || strictness(a.Policy) > strictness(found.Policy) {
				found, ok = a, true
			}
		}
	}
	return found, ok
}

func strictness(p hub.UsePolicy) int { return slices.Index(hub.UsePolicies(), p) }
