package agentaccount

import (
	"context"
	"errors"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// agent is one agent's login runtime and what it last reported. The
// fields after change are guarded by Manager.mu.
type agent struct {
	drv    hub.AgentLoginDriver
	info   hub.AgentLoginAgent
	change chan struct{} // one slot: the agent's changes run one at a time

	state    hub.AgentRuntimeState
	message  string
	rt       hub.AgentLoginRuntime // nil unless started
	busy     chan struct{}         // closed when the start or read in flight ends; nil when none
	status   hub.AgentLoginStatus
	statusAt time.Time // zero: never read, or stale by decree
	used     time.Time
	idle     hub.Timer
}

// entryLocked is a's line of the listing. m.mu held.
func (a *agent) entryLocked() hub.AgentAccount {
	e := hub.AgentAccount{Agent: a.info.ID, Name: a.info.Name, State: a.state, Message: a.message,
		Command: a.info.Command, LoginCommand: a.info.LoginCommand, AgentLoginStatus: a.status}
	if e.Targets == nil {
		e.Targets = []hub.AgentLoginTarget{}
	}
	if !a.statusAt.IsZero() {
		e.StatusAt = a.statusAt.UnixMilli()
	}
	return e
}

func (a *agent) stopIdle() {
	if a.idle != nil {
		a.idle.Stop()
		a.idle = nil
	}
}

// freshLocked makes sure a's runtime is started and its status young:
// it starts the runtime when none runs, or re-reads a status older than
// StatusMaxAge, and returns the channel closed when that work ends; nil
// when there is nothing to wait for. m.mu held.
func (m *Manager) freshLocked(a *agent) chan struct{} {
	now := m.cfg.Clock.Now()
	a.used = now
	if a.busy != nil {
		return a.busy
	}
	if m.closed {
		return nil
	}
	ch := make(chan struct{})
	switch {
	case a.rt == nil:
		a.busy, a.state, a.message = ch, hub.AgentRuntimeStarting, ""
		m.work.Add(1)
		go m.start(a, ch)
	case now.Sub(a.statusAt) >= StatusMaxAge:
		a.busy = ch
		m.work.Add(1)
		go m.read(a, a.rt, ch)
	default:
		return nil
	}
	return ch
}

// start starts a's runtime and reads its first status; ch is a.busy.
func (m *Manager) start(a *agent, ch chan struct{}) {
	defer m.work.Done()
	ctx, cancel := context.WithTimeout(m.ctx, StartTimeout)
	defer cancel()
	rt, err := a.drv.Start(ctx)
	var st hub.AgentLoginStatus
	if err == nil {
		st, err = rt.Status(ctx)
		if err != nil {
			rt.Close()
		}
	}
	m.mu.Lock()
	defer close(ch)
	defer m.mu.Unlock()
	a.busy = nil
	switch {
	case err == nil && m.closed:
		go rt.Close()
		return
	case errors.Is(err, hub.ErrAgentNotInstalled):
		a.state, a.message = hub.AgentRuntimeNotInstalled, hub.MessageOf(err)
		return
	case err != nil:
		m.cfg.Log.Warn("agent login runtime did not start", "agent", a.info.ID, "kind", hub.KindOf(err).String())
		a.state, a.message = hub.AgentRuntimeUnavailable, a.info.Name+"'s login interface did not start: "+hub.MessageOf(err)
		return
	}
	a.rt, a.state, a.message = rt, hub.AgentRuntimeReady, ""
	a.status, a.statusAt = normalize(st), m.cfg.Clock.Now()
	// A driver may learn its login command from the agent as it starts
	// (a custom ACP agent's terminal method).
	if lc := a.drv.Agent().LoginCommand; lc != "" {
		a.info.LoginCommand = lc
	}
	m.work.Add(1)
	go m.watch(a, rt)
	m.armIdleLocked(a, IdleStop)
}

// read re-reads a's status from rt; ch is a.busy. A runtime that does
// not answer is stopped and reported unavailable: the next request
// starts it again.
func (m *Manager) read(a *agent, rt hub.AgentLoginRuntime, ch chan struct{}) {
	defer m.work.Done()
	ctx, cancel := context.WithTimeout(m.ctx, OpTimeout)
	defer cancel()
	st, err := rt.Status(ctx)
	m.mu.Lock()
	defer close(ch)
	defer m.mu.Unlock()
	a.busy = nil
	if a.rt != rt {
		return // stopped meanwhile
	}
	if err != nil {
		m.cfg.Log.Warn("agent login status unreadable", "agent", a.info.ID, "kind", hub.KindOf(err).String())
		m.dropLocked(a, hub.AgentRuntimeUnavailable, a.info.Name+"'s login interface stopped answering; it starts again on the next request.")
		return
	}
	a.status, a.statusAt, a.state = normalize(st), m.cfg.Clock.Now(), hub.AgentRuntimeReady
}

// watch reports a runtime that ended on its own.
func (m *Manager) watch(a *agent, rt hub.AgentLoginRuntime) {
	defer m.work.Done()
	select {
	case <-rt.Done():
	case <-m.ctx.Done():
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.rt == rt {
		m.cfg.Log.Warn("agent login runtime ended", "agent", a.info.ID)
		m.dropLocked(a, hub.AgentRuntimeUnavailable, a.info.Name+"'s login interface stopped; it starts again on the next request.")
	}
}

// dropLocked forgets a's runtime (closing it in the background), ending
// its pending logins, and sets a's state. m.mu held.
func (m *Manager) dropLocked(a *agent, state hub.AgentRuntimeState, msg string) {
	rt := a.rt
	a.rt, a.state, a.message, a.statusAt = nil, state, msg, time.Time{}
	a.stopIdle()
	for _, at := range m.attempts {
		if at.agent == a && at.rec.State == hub.AttemptPending {
			m.settleLocked(at, hub.AttemptFailed, "The agent's login interface stopped; start the login again.")
		}
	}
	if rt != nil {
		m.work.Add(1)
		go func() {
			defer m.work.Done()
			rt.Close()
		}()
	}
}

// armIdleLocked checks a's use after d. m.mu held.
func (m *Manager) armIdleLocked(a *agent, d time.Duration) {
	a.stopIdle()
	rt := a.rt
	a.idle = m.cfg.Clock.AfterFunc(d, func() { m.idleCheck(a, rt) })
}

// idleCheck stops a's runtime rt once unused for IdleStop, unless one of
// its logins is pending.
func (m *Manager) idleCheck(a *agent, rt hub.AgentLoginRuntime) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.rt != rt || m.closed {
		return
	}
	if left := IdleStop - m.cfg.Clock.Now().Sub(a.used); left > 0 {
		m.armIdleLocked(a, left)
		return
	}
	for _, at := range m.attempts {
		if at.agent == a && at.rec.State == hub.AttemptPending {
			m.armIdleLocked(a, IdleStop)
			return
		}
	}
	m.dropLocked(a, hub.AgentRuntimeIdle, "")
}
