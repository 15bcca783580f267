package agentaccount

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The timings of the contract and of the earlier system.
const (
	ListWait       = 4 * time.Second  // a listing waits for runtimes at most this long
	StatusMaxAge   = 2 * time.Second  // older statuses are re-read
	IdleStop       = 5 * time.Minute  // a runtime unused this long stops, unless a login is pending
	AttemptTTL     = 10 * time.Minute // a login not finished by then expires
	SettledVisible = 5 * time.Minute  // a settled attempt stays listed this long
	SubmitWait     = 3 * time.Second  // a code or address waits this long for the login to settle
	StartTimeout   = 90 * time.Second // starting a runtime and reading its first status (OpenCode loads its catalog)
	OpTimeout      = 30 * time.Second // one call to a runtime
)

// Config configures a Manager. Logins, Clock and NewID are required.
type Config struct {
	Logins hub.AgentLogins
	Clock  hub.Clock
	// NewID makes an attempt's id (a UUID in the Hub).
	NewID func() string
	// Log receives diagnostics: never a key, code, address or an agent's
	// message. Default discards.
	Log *slog.Logger
	// Changed is told, on a goroutine of its own, after a login, logout
	// or activate of agent succeeded: running workspaces re-read it.
	Changed func(agent string)
}

// Manager runs the agents' login runtimes and the login attempts. Its
// methods are safe for concurrent use; each answers the whole listing.
type Manager struct {
	cfg    Config
	ctx    context.Context // ends at Close: runtimes' starts and reads
	cancel context.CancelFunc
	work   sync.WaitGroup // goroutines Close waits for

	mu       sync.Mutex
	closed   bool
	agents   []*agent
	byID     map[string]*agent
	attempts map[string]*attempt
	seq      uint64 // attempts started, for their order
}

// New returns a Manager over cfg's agents. It starts nothing: runtimes
// start on the first request that needs them.
func New(cfg Config) (*Manager, error) {
	if cfg.Logins == nil || cfg.Clock == nil || cfg.NewID == nil {
		return nil, errors.New("agentaccount: Config needs Logins, Clock and NewID")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Changed == nil {
		cfg.Changed = func(string) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, ctx: ctx, cancel: cancel, byID: map[string]*agent{}, attempts: map[string]*attempt{}}
	for _, d := range cfg.Logins.Drivers() {
		info := d.Agent()
		if _, dup := m.byID[info.ID]; dup {
			cancel()
			return nil, errors.New("agentaccount: two drivers for agent " + info.ID)
		}
		a := &agent{drv: d, info: info, change: make(chan struct{}, 1), state: hub.AgentRuntimeIdle}
		m.agents = append(m.agents, a)
		m.byID[info.ID] = a
	}
	return m, nil
}

// Close stops every runtime and abandons every login, and returns once
// they are gone. Later requests are refused.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	var rts []hub.AgentLoginRuntime
	for _, a := range m.agents {
		if a.rt != nil {
			rts = append(rts, a.rt)
			a.rt = nil
		}
		a.stopIdle()
	}
	for _, at := range m.attempts {
		m.settleLocked(at, hub.AttemptCancelled, "The Hub is shutting down.")
		if at.prune != nil {
			at.prune.Stop()
		}
	}
	m.mu.Unlock()
	m.cancel()
	for _, rt := range rts {
		rt.Close()
	}
	m.work.Wait()
}

// List answers the listing, starting the runtimes not running and
// re-reading statuses older than StatusMaxAge; it waits at most
// ListWait for them (then a runtime still starting is listed
// `starting`). It never starts a login.
func (m *Manager) List(ctx context.Context) (hub.AgentAccounts, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return hub.AgentAccounts{}, hub.Errorf(hub.Unavailable, "The Hub is shutting down.")
	}
	var waits []chan struct{}
	for _, a := range m.agents {
		if ch := m.freshLocked(a); ch != nil {
			waits = append(waits, ch)
		}
	}
	m.mu.Unlock()
	if len(waits) > 0 {
		timeout := make(chan struct{})
		t := m.cfg.Clock.AfterFunc(ListWait, func() { close(timeout) })
		defer t.Stop()
	wait:
		for _, ch := range waits {
			select {
			case <-ch:
			case <-timeout:
				break wait
			case <-ctx.Done():
				return hub.AgentAccounts{}, ctx.Err()
			}
		}
	}
	return m.listing(), nil
}

// listing is the current listing.
func (m *Manager) listing() hub.AgentAccounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := hub.AgentAccounts{Agents: make([]hub.AgentAccount, 0, len(m.agents)), Attempts: []hub.AgentLoginAttempt{}}
	for _, a := range m.agents {
		out.Agents = append(out.Agents, a.entryLocked())
	}
	for _, at := range m.attempts {
		out.Attempts = append(out.Attempts, at.rec)
	}
	slices.SortFunc(out.Attempts, func(x, y hub.AgentLoginAttempt) int {
		return cmp.Or(cmp.Compare(x.StartedAt, y.StartedAt), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// agentNamed finds a request's agent: an unknown one is Invalid.
func (m *Manager) agentNamed(id string) (*agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, hub.Errorf(hub.Conflict, "The Hub is shutting down.")
	}
	a := m.byID[id]
	if a == nil {
		return nil, invalid("agent", "There is no such agent on this Hub.")
	}
	return a, nil
}

// exclusive runs f with agent a's changes serialized and its runtime
// started: a runtime that cannot start is Conflict, saying why.
func (m *Manager) exclusive(ctx context.Context, a *agent, f func(rt hub.AgentLoginRuntime) error) error {
	select {
	case a.change <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.change }()
	rt, err := m.runtime(ctx, a)
	if err != nil {
		return err
	}
	return f(rt)
}

// runtime returns a's started runtime, starting it and waiting for it.
func (m *Manager) runtime(ctx context.Context, a *agent) (hub.AgentLoginRuntime, error) {
	for range 2 { // a start, then a restart of one that died meanwhile
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, hub.Errorf(hub.Conflict, "The Hub is shutting down.")
		}
		if a.rt != nil && a.state == hub.AgentRuntimeReady {
			rt := a.rt
			a.used = m.cfg.Clock.Now()
			m.mu.Unlock()
			return rt, nil
		}
		ch := m.freshLocked(a)
		m.mu.Unlock()
		if ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		m.mu.Lock()
		rt, state, msg := a.rt, a.state, a.message
		m.mu.Unlock()
		if rt != nil && state == hub.AgentRuntimeReady {
			return rt, nil
		}
		if state == hub.AgentRuntimeNotInstalled {
			return nil, hub.Errorf(hub.Conflict, "%s", msg)
		}
	}
	return nil, hub.Errorf(hub.Conflict, "%s's login interface is not available; try again.", a.info.Name)
}

// call runs f under OpTimeout and the Manager's life.
func (m *Manager) call(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel)
	defer stop()
	return f(ctx)
}

// public maps a runtime's error to the answer: the agent's refusal
// (Invalid) keeps its field and its redacted message, an agent not
// ready is Conflict, anything else Internal with the generic message
// (the cause logged by class only: it may hold what the agent said).
func (m *Manager) public(a *agent, op string, err error, r *Redactor) error {
	if err == nil {
		return nil
	}
	var he *hub.Error
	if errors.As(err, &he) {
		switch he.Kind {
		case hub.Invalid, hub.Conflict, hub.NotFound:
			out := &hub.Error{Kind: he.Kind, Message: r.Redact(he.Message)}
			if he.Kind == hub.NotFound {
				out.Kind = hub.Invalid // the agent does not know the target: bad input
			}
			if he.Details != nil && he.Details.Field != "" {
				out.Details = &hub.Details{Field: he.Details.Field}
			}
			return out
		case hub.Unavailable:
			m.cfg.Log.Warn("agent login interface unavailable", "agent", a.info.ID, "op", op)
			return hub.Errorf(hub.Conflict, "%s's login interface did not answer; try again.", a.info.Name)
		}
	}
	m.cfg.Log.Error("agent accounts request failed", "agent", a.info.ID, "op", op, "kind", hub.KindOf(err).String())
	return hub.Errorf(hub.Internal, "The agent accounts request failed.")
}

// changed re-reads a's status and tells the workspaces, after a change.
func (m *Manager) changed(ctx context.Context, a *agent) {
	m.reread(ctx, a)
	m.mu.Lock()
	m.tellLocked(a)
	m.mu.Unlock()
}

// reread re-reads a's status now, waiting for it within ctx: the answer
// to a change lists its outcome.
func (m *Manager) reread(ctx context.Context, a *agent) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	a.statusAt = time.Time{}
	ch := m.freshLocked(a)
	m.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

// tellLocked tells the workspaces, on a goroutine of its own, that a's
// logins changed. m.mu held (so Close's wait cannot begin meanwhile).
func (m *Manager) tellLocked(a *agent) {
	if m.closed {
		return
	}
	m.work.Add(1)
	go func() {
		defer m.work.Done()
		m.cfg.Changed(a.info.ID)
	}()
}
