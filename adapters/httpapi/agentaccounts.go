package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// AgentAccountService is the agent-accounts family (agentaccounts.go).
// Every method answers the whole listing.
type AgentAccountService interface {
	AgentAccounts(ctx context.Context) (hub.AgentAccounts, error)
	ConnectAgentAccountKey(ctx context.Context, req hub.AgentKeyLogin) (hub.AgentAccounts, error)
	StartAgentAccountLogin(ctx context.Context, req hub.AgentLoginStart) (hub.AgentAccounts, error)
	SubmitAgentAccountCode(ctx context.Context, attemptID, code string) (hub.AgentAccounts, error)
	SubmitAgentAccountRedirect(ctx context.Context, attemptID, address string) (hub.AgentAccounts, error)
	CancelAgentAccountLogin(ctx context.Context, attemptID string) (hub.AgentAccounts, error)
	LogoutAgentAccount(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error)
	ActivateAgentAccountCredential(ctx context.Context, ref hub.AgentCredentialRef) (hub.AgentAccounts, error)
}

// decodeAccountRequest decodes an agent-accounts body, whose refusals
// are AgentAccountErrors: a body over agentaccount.MaxBody is "The
// request is too large." (400, not 413: the family's own rule), and an
// unknown or mistyped field is named in `field`.
func decodeAccountRequest(r *http.Request, v any) error {
	err := httpjson.Decode(r, agentaccount.MaxBody, false, v)
	if err == nil {
		return nil
	}
	msg := hub.MessageOf(err)
	field := func(name, message string) error {
		return &hub.Error{Kind: hub.Invalid, Message: message, Details: &hub.Details{Field: name}}
	}
	switch {
	case strings.HasPrefix(msg, "request body is larger than"):
		return hub.Errorf(hub.Invalid, "The request is too large.")
	case strings.HasPrefix(msg, "request contains an unknown field: "):
		name := strings.Trim(strings.TrimPrefix(msg, "request contains an unknown field: "), `"`)
		return field(name, "Unexpected field "+name+".")
	case strings.Contains(msg, " must be "):
		name, _, _ := strings.Cut(msg, " must be ")
		if i := strings.IndexByte(name, '.'); i >= 0 {
			name = name[:i] // answers.x is the answers' fault
		}
		return field(name, "The "+name+" must be "+strings.SplitN(msg, " must be ", 2)[1]+".")
	}
	return err
}

// writeAccounts writes the listing, or returns err.
func writeAccounts(w http.ResponseWriter, l hub.AgentAccounts, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (a *api) handleGetAgentAccounts(w http.ResponseWriter, r *http.Request, _ caller) error {
	l, err := a.accounts.AgentAccounts(r.Context())
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountKey(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Agent   string            `json:"agent"`
		Target  string            `json:"target"`
		Method  string            `json:"method"`
		Key     string            `json:"key"`
		Answers map[string]string `json:"answers"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.ConnectAgentAccountKey(r.Context(), hub.AgentKeyLogin{Agent: req.Agent, Target: req.Target, Method: req.Method, Key: req.Key, Answers: req.Answers})
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountLogin(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Agent   string            `json:"agent"`
		Target  string            `json:"target"`
		Method  string            `json:"method"`
		Answers map[string]string `json:"answers"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.StartAgentAccountLogin(r.Context(), hub.AgentLoginStart{Agent: req.Agent, Target: req.Target, Method: req.Method, Answers: req.Answers})
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountCode(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Code string `json:"code"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.SubmitAgentAccountCode(r.Context(), r.PathValue("attemptId"), req.Code)
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountRedirect(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Address string `json:"address"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.SubmitAgentAccountRedirect(r.Context(), r.PathValue("attemptId"), req.Address)
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountCancel(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct{}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.CancelAgentAccountLogin(r.Context(), r.PathValue("attemptId"))
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountLogout(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Agent      string `json:"agent"`
		Target     string `json:"target"`
		Credential string `json:"credential"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.LogoutAgentAccount(r.Context(), hub.AgentCredentialRef{Agent: req.Agent, Target: req.Target, Credential: req.Credential})
	return writeAccounts(w, l, err)
}

func (a *api) handleAgentAccountActivate(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Agent      string `json:"agent"`
		Credential string `json:"credential"`
	}
	if err := decodeAccountRequest(r, &req); err != nil {
		return err
	}
	l, err := a.accounts.ActivateAgentAccountCredential(r.Context(), hub.AgentCredentialRef{Agent: req.Agent, Credential: req.Credential})
	return writeAccounts(w, l, err)
}
