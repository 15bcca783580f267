package agentaccount

import (
	"cmp"
	"context"
	"net/url"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// attempt is one login in progress or settled. Guarded by Manager.mu.
type attempt struct {
	rec      hub.AgentLoginAttempt
	agent    *agent
	flow     hub.AgentLoginFlow
	callback string    // a redirect login's recorded callback
	redact   *Redactor // digests of what was submitted; kept after settling, for the message
	expire   hub.Timer
	prune    hub.Timer
	settled  chan struct{} // closed once it left pending
	seq      uint64        // the order it started in
}

// errGone is the answer for an attempt that is unknown, expired or no
// longer pending.
func errGone() error {
	return hub.Errorf(hub.NotFound, "That login is no longer in progress.")
}

// Key logs agent req.Agent in with a key. The key and the answers go to
// the agent and are not kept.
func (m *Manager) Key(ctx context.Context, req hub.AgentKeyLogin) (hub.AgentAccounts, error) {
	if err := CheckKeyLogin(req); err != nil {
		return hub.AgentAccounts{}, err
	}
	a, err := m.agentNamed(req.Agent)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	r := secrets(req.Key, req.Answers)
	err = m.exclusive(ctx, a, func(rt hub.AgentLoginRuntime) error {
		if err := m.offered(a, req.Target, req.Method, hub.AgentMethodKey); err != nil {
			return err
		}
		if err := m.call(ctx, func(ctx context.Context) error { return rt.LoginWithKey(ctx, req) }); err != nil {
			return m.public(a, "key", err, r)
		}
		m.changed(ctx, a)
		return nil
	})
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	return m.listing(), nil
}

// Start starts a browser or device login, replacing the same agent's
// and target's earlier unfinished one, and answers the listing with the
// new attempt.
func (m *Manager) Start(ctx context.Context, req hub.AgentLoginStart) (hub.AgentAccounts, error) {
	if err := CheckLoginStart(req); err != nil {
		return hub.AgentAccounts{}, err
	}
	a, err := m.agentNamed(req.Agent)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	r := secrets("", req.Answers)
	err = m.exclusive(ctx, a, func(rt hub.AgentLoginRuntime) error {
		// A method the agent does not offer is refused before the earlier
		// login is cancelled (which comes first: an agent's listener is
		// one port, busy until its login ends).
		if err := m.offered(a, req.Target, req.Method, hub.AgentMethodOAuth); err != nil {
			return err
		}
		m.mu.Lock()
		for _, at := range m.attempts {
			if at.agent == a && at.rec.Target == req.Target && at.rec.State == hub.AttemptPending {
				m.settleLocked(at, hub.AttemptCancelled, "Replaced by a newer login.")
			}
		}
		m.mu.Unlock()
		var flow hub.AgentLoginFlow
		err := m.call(ctx, func(ctx context.Context) error {
			var err error
			flow, err = rt.Login(ctx, req)
			return err
		})
		if err != nil {
			return m.public(a, "login", err, r)
		}
		m.track(a, req, flow, r)
		return nil
	})
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	return m.listing(), nil
}

// track records a started flow as a pending attempt and follows it.
func (m *Manager) track(a *agent, req hub.AgentLoginStart, flow hub.AgentLoginFlow, r *Redactor) {
	ch := flow.Challenge()
	now := m.cfg.Clock.Now()
	expires := now.Add(AttemptTTL)
	if ch.ExpiresAt.After(expires) {
		expires = ch.ExpiresAt
	}
	at := &attempt{agent: a, flow: flow, callback: ch.Callback, redact: r, settled: make(chan struct{}), rec: hub.AgentLoginAttempt{
		ID: m.cfg.NewID(), Agent: a.info.ID, Target: req.Target, Method: req.Method,
		URL: ch.URL, Instructions: r.Redact(ch.Instructions), Completion: ch.Completion, UserCode: ch.UserCode,
		State: hub.AttemptPending, StartedAt: now.UnixMilli(), ExpiresAt: expires.UnixMilli(),
	}}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		flow.Cancel()
		return
	}
	m.seq++
	at.seq = m.seq
	m.attempts[at.rec.ID] = at
	m.pruneSettledLocked(a)
	at.expire = m.cfg.Clock.AfterFunc(expires.Sub(now), func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.settleLocked(at, hub.AttemptExpired, "The login expired; start it again.")
	})
	m.work.Add(1)
	go m.follow(at)
}

// follow settles at when its flow does: complete (the agent's status is
// re-read and the workspaces told) or failed with the agent's redacted
// reason.
func (m *Manager) follow(at *attempt) {
	defer m.work.Done()
	select {
	case <-at.flow.Done():
	case <-m.ctx.Done():
		return
	}
	err := at.flow.Err()
	m.mu.Lock()
	if at.rec.State != hub.AttemptPending {
		m.mu.Unlock()
		return
	}
	if err != nil {
		m.settleLocked(at, hub.AttemptFailed, at.redact.Redact(hub.MessageOf(err)))
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	// The login is read back before the attempt settles, so the answer
	// that shows it complete (a submit waits for that) lists the login.
	m.reread(m.ctx, at.agent)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tellLocked(at.agent) // the agent has the login, whatever became of the attempt meanwhile
	m.settleLocked(at, hub.AttemptComplete, "")
}

// settleLocked ends a pending attempt in state with msg, abandoning its
// flow unless it completed or failed on its own, and schedules its
// removal from the listing. m.mu held.
func (m *Manager) settleLocked(at *attempt, state hub.AgentAttemptState, msg string) {
	if at.rec.State != hub.AttemptPending {
		return
	}
	at.rec.State, at.rec.Message = state, msg
	close(at.settled)
	if at.expire != nil {
		at.expire.Stop()
	}
	if state == hub.AttemptCancelled || state == hub.AttemptExpired {
		at.flow.Cancel()
	}
	id := at.rec.ID
	at.prune = m.cfg.Clock.AfterFunc(SettledVisible, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.attempts[id] == at {
			delete(m.attempts, id)
		}
	})
}

// pending finds attempt id, pending.
func (m *Manager) pending(id string) (*attempt, error) {
	if err := CheckAttemptID(id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, hub.Errorf(hub.Unavailable, "The Hub is shutting down.")
	}
	at := m.attempts[id]
	if at == nil || at.rec.State != hub.AttemptPending {
		return nil, errGone()
	}
	return at, nil
}

// SubmitCode finishes a code login with the code the login page showed,
// then waits up to SubmitWait for the login to settle.
func (m *Manager) SubmitCode(ctx context.Context, id, code string) (hub.AgentAccounts, error) {
	at, err := m.pending(id)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	if err := CheckCode(code); err != nil {
		return hub.AgentAccounts{}, err
	}
	if at.rec.Completion != hub.CompletionCode {
		return hub.AgentAccounts{}, invalid("code", "This login does not finish with a code.")
	}
	at.redact.Add(code)
	return m.submit(ctx, at, "code", func(ctx context.Context) error { return at.flow.SubmitCode(ctx, code) })
}

// SubmitRedirect finishes a redirect login with the address the
// browser landed on: confined to the attempt's own callback
// (CheckRedirect), then requested once on the Hub machine.
func (m *Manager) SubmitRedirect(ctx context.Context, id, address string) (hub.AgentAccounts, error) {
	at, err := m.pending(id)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	if err := CheckAddress(address); err != nil {
		return hub.AgentAccounts{}, err
	}
	if at.rec.Completion != hub.CompletionRedirect {
		return hub.AgentAccounts{}, invalid("address", "This login does not finish with an address.")
	}
	target, err := CheckRedirect(at.callback, address)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	at.redact.Add(address)
	at.redact.Add(target)
	if u, err := url.Parse(target); err == nil {
		for _, vs := range u.Query() {
			for _, v := range vs {
				at.redact.Add(v)
			}
		}
	}
	return m.submit(ctx, at, "redirect", func(ctx context.Context) error { return at.flow.SubmitRedirect(ctx, target) })
}

// submit hands a code or address to at's flow, serialized with at's
// agent's changes, then waits up to SubmitWait for it to settle.
func (m *Manager) submit(ctx context.Context, at *attempt, op string, f func(context.Context) error) (hub.AgentAccounts, error) {
	a := at.agent
	select {
	case a.change <- struct{}{}:
	case <-ctx.Done():
		return hub.AgentAccounts{}, ctx.Err()
	}
	err := m.call(ctx, f)
	<-a.change
	if err != nil {
		return hub.AgentAccounts{}, m.public(a, op, err, at.redact)
	}
	timeout := make(chan struct{})
	t := m.cfg.Clock.AfterFunc(SubmitWait, func() { close(timeout) })
	defer t.Stop()
	select {
	case <-at.settled:
	case <-timeout:
	case <-ctx.Done():
		return hub.AgentAccounts{}, ctx.Err()
	}
	return m.listing(), nil
}

// Cancel abandons a login in progress.
func (m *Manager) Cancel(ctx context.Context, id string) (hub.AgentAccounts, error) {
	at, err := m.pending(id)
	if err != nil {
		return hub.AgentAccounts{}, err
	}
	m.mu.Lock()
	m.settleLocked(at, hub.AttemptCancelled, "Cancelled.")
	m.mu.Unlock()
	return m.listing(), nil
}

// secrets is a Redactor of what a request submits.
func secrets(key string, answers map[string]string) *Redactor {
	r := &Redactor{}
	r.Add(key)
	for _, v := range answers {
		r.Add(v)
	}
	return r
}

// offered refuses a target a's status does not list, and, for a
// browser login of an agent that offers them, a method that is not one
// of the target's oauth methods: those refusals come before the earlier
// login is cancelled. Anything else is the agent's to refuse, in its own
// words (Claude Code's key login says which variable to set; a custom
// agent says what to run).
func (m *Manager) offered(a *agent, target, method, kind string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range a.status.Targets {
		if t.ID != target {
			continue
		}
		if kind != hub.AgentMethodOAuth || !a.status.Capabilities.Login {
			return nil
		}
		for _, me := range t.Methods {
			if me.ID == method && me.Kind == kind {
				return nil
			}
		}
		return invalid("method", "That login method is not offered here.")
	}
	return invalid("target", "There is no such provider for "+a.info.Name+".")
}

// MaxSettled bounds the settled attempts an agent keeps listed: a client
// starting logins in a loop (each cancelling the one before) would
// otherwise pile up SettledVisible's worth of them. The oldest go first.
const MaxSettled = 16

// pruneSettledLocked drops a's oldest settled attempts beyond MaxSettled.
// m.mu held.
func (m *Manager) pruneSettledLocked(a *agent) {
	var settled []*attempt
	for _, at := range m.attempts {
		if at.agent == a && at.rec.State != hub.AttemptPending {
			settled = append(settled, at)
		}
	}
	if len(settled) <= MaxSettled {
		return
	}
	slices.SortFunc(settled, func(x, y *attempt) int {
		return cmp.Or(cmp.Compare(x.rec.StartedAt, y.rec.StartedAt), cmp.Compare(x.seq, y.seq))
	})
	for _, at := range settled[:len(settled)-MaxSettled] {
		if at.prune != nil {
			at.prune.Stop()
		}
		delete(m.attempts, at.rec.ID)
	}
}
