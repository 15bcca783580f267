package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/fakes/agentscript"
)

// agent is the acp.Agent of the scripted agent.
type agent struct {
	conn         *acp.AgentSideConnection
	out          *lockedWriter
	state        string
	load         bool
	authRequired bool
	keyVar       string           // see --key-var
	demo         bool             // see demo.go
	authMethods  []acp.AuthMethod // see --auth-methods
	logout       bool             // see --logout

	mu     sync.Mutex
	models map[string]string // by session
	modes  map[string]string
}

var (
	_ acp.Agent       = (*agent)(nil)
	_ acp.AgentLoader = (*agent)(nil)
)

func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	methods := []acp.AuthMethod{}
	if a.keyVar != "" {
		methods = append(methods, acp.AuthMethod{EnvVar: &acp.AuthMethodEnvVarInline{Type: "env_var", Id: "key", Name: "API key",
			Vars: []acp.AuthEnvVar{{Name: a.keyVar}}}})
	}
	methods = append(methods, offered(a.authMethods, p.ClientCapabilities)...)
	caps := acp.AgentCapabilities{LoadSession: a.load,
		PromptCapabilities:  acp.PromptCapabilities{Image: true},
		SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}}}
	if a.logout {
		caps.Auth.Logout = &acp.LogoutCapabilities{}
	}
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:         &acp.Implementation{Name: "acpagent", Version: "1"},
		AuthMethods:       methods,
		AgentCapabilities: caps}, nil
}

func (a *agent) Authenticate(_ context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if a.keyVar == "" || p.MethodId != "key" {
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"methodId": p.MethodId})
	}
	switch os.Getenv(a.keyVar) {
	case "":
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"missing": a.keyVar})
	case "refused":
		return acp.AuthenticateResponse{}, loginRequired()
	}
	a.mu.Lock()
	a.authRequired = false
	a.mu.Unlock()
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) Logout(context.Context, acp.LogoutRequest) (acp.LogoutResponse, error) {
	if !a.logout {
		return acp.LogoutResponse{}, nil
	}
	if err := a.recordLogout(); err != nil {
		return acp.LogoutResponse{}, acp.NewInternalError(map[string]any{"error": "logout not recorded"})
	}
	return acp.LogoutResponse{}, nil
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// loginRequired is ACP's -32000 answer.
func loginRequired() error {
	return &acp.RequestError{Code: -32000, Message: "Authentication required"}
}

func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.mu.Lock()
	locked := a.authRequired
	a.mu.Unlock()
	if locked {
		return acp.NewSessionResponse{}, loginRequired()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "sess-" + hex.EncodeToString(b[:])
	if err := os.WriteFile(a.history(id), nil, 0o600); err != nil {
		return acp.NewSessionResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acp.NewSessionResponse{SessionId: acp.SessionId(id), Modes: a.modeState(id), ConfigOptions: a.options(id)}, nil
}

func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	f, err := os.Open(a.history(string(p.SessionId)))
	if err != nil {
		return acp.LoadSessionResponse{}, &acp.RequestError{Code: -32002, Message: "Resource not found"}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		a.out.Write(append(append([]byte(nil), sc.Bytes()...), '\n'))
	}
	return acp.LoadSessionResponse{Modes: a.modeState(string(p.SessionId)), ConfigOptions: a.options(string(p.SessionId))}, nil
}

func (a *agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	entries, _ := os.ReadDir(a.state)
	res := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			cwd := ""
			if p.Cwd != nil {
				cwd = *p.Cwd
			}
			res.Sessions = append(res.Sessions, acp.SessionInfo{SessionId: acp.SessionId(id), Cwd: cwd})
		}
	}
	return res, nil
}

func (a *agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	a.mu.Lock()
	a.modes[string(p.SessionId)] = string(p.ModeId)
	a.mu.Unlock()
	return acp.SetSessionModeResponse{}, nil
}

func (a *agent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	if v := p.ValueId; v != nil && v.ConfigId == "model" {
		a.mu.Lock()
		a.models[string(v.SessionId)] = string(v.Value)
		a.mu.Unlock()
		return acp.SetSessionConfigOptionResponse{ConfigOptions: a.options(string(v.SessionId))}, nil
	}
	return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown option"})
}

// history is the file of a session's updates, replayed by LoadSession.
func (a *agent) history(id string) string {
	return filepath.Join(a.state, filepath.Base(id)+".jsonl")
}

func (a *agent) modeState(id string) *acp.SessionModeState {
	a.mu.Lock()
	cur := a.modes[id]
	a.mu.Unlock()
	if cur == "" {
		cur = agentscript.Modes[0][0]
	}
	st := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(cur)}
	for _, m := range agentscript.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m[0]), Name: m[1]})
	}
	return st
}

// options is the session's model option, as raw JSON decoded by the SDK.
func (a *agent) options(id string) []acp.SessionConfigOption {
	a.mu.Lock()
	cur := a.models[id]
	a.mu.Unlock()
	if cur == "" {
		cur = agentscript.Models[0][0]
	}
	var opts []map[string]string
	for _, m := range agentscript.Models {
		opts = append(opts, map[string]string{"value": m[0], "name": m[1]})
	}
	raw, _ := json.Marshal([]map[string]any{{"id": "model", "name": "Model", "category": "model", "type": "select",
		"currentValue": cur, "options": opts}})
	var out []acp.SessionConfigOption
	_ = json.Unmarshal(raw, &out)
	return out
}
