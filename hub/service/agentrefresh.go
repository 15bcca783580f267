package service

import (
	"context"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Limits of AgentLoginChanged.
const (
	// agentRefreshConcurrency bounds the sessions told at once: a Hub
	// with many workspaces must not open as many requests at one login.
	agentRefreshConcurrency = 8
	// agentRefreshTimeout bounds the wait for one session, by the Hub's
	// clock: a session that does not answer is given up on, and logged.
	agentRefreshTimeout = 5 * time.Second
)

// AgentLoginChanged tells every running workspace session that the login
// of the coding agent with this id changed on the Hub machine (a login, a
// logout, another account made active): each re-reads the agent and
// restarts it once no turn of it runs (hub.WorkspaceSession's
// AgentLoginChanged), so its conversations find the new login on their
// next prompt. Sessions are told concurrently, at most 8 at once, each
// within 5 s and ctx (the Hub's Close stops the sessions, which ends
// their waits too). A session
// that fails is logged at Warn with its workspace id, and the others are
// told all the same: it never fails, since the login itself is done. It
// returns once every session was told or given up on. A session whose
// start is under way is not told: its agents start after it, and read
// the store as it is then.
func (h *Hub) AgentLoginChanged(ctx context.Context, agent string) {
	sessions := h.runningSessions()
	if len(sessions) == 0 {
		return
	}
	slots := make(chan struct{}, agentRefreshConcurrency)
	var wg sync.WaitGroup
	for id, rw := range sessions {
		slots <- struct{}{} // each holder lets go within agentRefreshTimeout
		wg.Go(func() {
			defer func() { <-slots }()
			h.tellAgentLogin(ctx, id, rw.rs, agent)
		})
	}
	wg.Wait()
}

// tellAgentLogin tells the session rs of workspace id, within
// agentRefreshTimeout, logging a failure.
func (h *Hub) tellAgentLogin(ctx context.Context, id string, rs hub.WorkspaceSession, agent string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer h.clock.AfterFunc(agentRefreshTimeout, cancel).Stop()
	if err := rs.AgentLoginChanged(ctx, agent); err != nil {
		h.log.Warn("a workspace session did not take an agent's login change; its agents keep what they read until they restart",
			"workspace", id, "err", err)
	}
}
