package service

import (
	"context"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// The agent-accounts family: logins of the Hub machine's agents, run by
// hub/agentaccount's Manager over the AgentLogins port. Nothing here
// touches the Store: the Hub keeps no agent secret and no attempt
// survives it. After a login, logout or activate, every running
// workspace re-reads that agent (agentsChanged).

// newAgentAccounts makes the family's Manager.
func newAgentAccounts(h *Hub, logins hub.AgentLogins) (*agentaccount.Manager, error) {
	return agentaccount.New(agentaccount.Config{
		Logins: logins,
		Clock:  h.clock,
		NewID:  uuid.NewString,
		Log:    h.log.With("family", "agent-accounts"),
		// After a login, logout or activate every running workspace
		// re-reads the agent.
		Changed: h.agentsChanged,
	})
}

// AgentAccounts answers hubGetAgentAccounts.
func (h *Hub) AgentAccounts(ctx context.Context) (hub.AgentAccounts, error) {
	return h.accounts.List(ctx)
}

// ConnectAgentAccountKey answers hubConnectAgentAccountKey.
func (h *Hub) ConnectAgentAccountKey(ctx context.Context, req hub.AgentKeyLogin) (hub.AgentAccounts, error) {
	return h.accounts.Key(ctx, req)
}

// StartAgentAccountLogin answers hubStartAgentAccountLogin.
func (h *Hub) StartAgentAccountLogin(ctx context.Context, req hub.AgentLoginStart) (hub.AgentAccounts, error) {
	return h.accounts.Start(ctx, req)
}

// SubmitAgentAccountCode answers hubSubmitAgentAccountCode.
func (h *Hub) SubmitAgentAccountCode(ctx context.Context, attemptID, code string) (hub.AgentAccounts, error) {
	return h.accounts.SubmitCode(ctx, attemptID, code)
}

// SubmitAgentAccountRedirect answers hubSubmitAgentAccountRedirect.
func (h *Hub) SubmitAgentAccountRedirect(ctx context.Context, attemptID, address string) (hub.AgentAccounts, error) {
	return h.accounts.SubmitRedirect(ctx, attemptID, address)
}

// CancelAgentAccountLogin answers hubCancelAgentAccountLogin.
func (h *Hub) CancelAgentAccountLogin(ctx context.Context, attemptID string) (hub.AgentAccounts, error) {
	return h.accounts.Cancel(ctx, attemptID)
}

// LogoutAgentAccount answers hubLogoutAgentAccount.
func (h *Hub) LogoutAgentAccount(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error) {
	return h.accounts.Logout(ctx, ref)
}

// ActivateAgentAccountCredential answers hubActivateAgentAccountCredential.
func (h *Hub) ActivateAgentAccountCredential(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error) {
	return h.accounts.Activate(ctx, ref)
}

// agentsChanged is told, on a goroutine of the Manager's, that agent's
// logins changed: every running workspace re-reads it.
func (h *Hub) agentsChanged(agent string) {
	h.AgentLoginChanged(h.bg, agent)
}
