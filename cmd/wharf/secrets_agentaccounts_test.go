package main

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/hub"
)

// agentLoginBin builds the fake login programs (fakes/agentlogin/…)
// under the names of the agents' own commands, once per test binary; the
// scenario's daemon finds them first on its PATH.
var agentLoginBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "wharf-agent-logins-")
	if err != nil {
		return "", err
	}
	for name, pkg := range map[string]string{"claude": "claudecli", "codex": "codexserver", "gemini": "geminicli", "opencode": "opencodeserve"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "github.com/wharfhub/wharf/fakes/agentlogin/"+pkg).CombinedOutput()
		if err != nil {
			return "", &buildFailure{string(out)}
		}
	}
	return dir, nil
})

// exerciseAgentAccounts is the agent-accounts family's part of the
// scenario, through the real drivers and the fake login programs: a key
// login (and a key Claude Code refuses), a wrong and then a right code,
// a pasted redirect address, and a logout. Every key, code and address
// is a secret: the agents keep them in their own stores, outside the
// state directory, and the Hub keeps none.
func exerciseAgentAccounts(ctx context.Context, t *testing.T, sec *daemontest.Secrets, owner *daemontest.Client) {
	is := is.New(t)
	random := func() string { return rand.Text()[:16] }
	post := func(path string, body any, want int) hub.AgentAccounts {
		t.Helper()
		var l hub.AgentAccounts
		status, raw, err := owner.Do(ctx, "POST", "api/hub/agent-accounts/"+path, body, &l)
		is.NoErr(err) // answered
		if status != want {
			t.Fatalf("%s: %d %s", path, status, raw)
		}
		return l
	}
	ready := func() hub.AgentAccounts {
		deadline := time.Now().Add(90 * time.Second)
		for {
			var l hub.AgentAccounts
			status, raw, err := owner.Do(ctx, "GET", "api/hub/agent-accounts", nil, &l)
			is.NoErr(err)                   // answered
			is.Equal(status, http.StatusOK) // the listing
			n := 0
			for _, a := range l.Agents {
				switch a.State {
				case hub.AgentRuntimeReady:
					n++
				case hub.AgentRuntimeNotInstalled, hub.AgentRuntimeUnavailable:
					t.Fatalf("%s: %s %s", a.Agent, a.State, a.Message)
				}
			}
			if n == 4 {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agents' login runtimes are not ready: %s", raw)
			}
		}
	}
	ready()
	newAttempt := func(l hub.AgentAccounts, agent string) hub.AgentLoginAttempt {
		for _, a := range l.Attempts {
			if a.Agent == agent && a.State == hub.AttemptPending {
				return a
			}
		}
		t.Fatalf("no pending %s login in %+v", agent, l.Attempts)
		return hub.AgentLoginAttempt{}
	}

	key := "sk-scenario-" + random()
	sec.Register("agent key (codex)", key)
	post("key", map[string]string{"agent": "codex", "target": "openai", "method": "api-key", "key": key}, http.StatusOK)
	refused := "sk-refused-" + random()
	sec.Register("agent key (refused by claude)", refused)
	post("key", map[string]string{"agent": "claude", "target": "anthropic", "method": "api-key", "key": refused}, http.StatusBadRequest)

	l := post("login", map[string]string{"agent": "claude", "target": "anthropic", "method": "claudeai"}, http.StatusOK)
	at := newAttempt(l, "claude")
	wrong := "wrong-code-" + random()
	sec.Register("agent code (wrong)", wrong)
	post("attempts/"+at.ID+"/code", map[string]string{"code": wrong}, http.StatusOK)
	l = post("login", map[string]string{"agent": "claude", "target": "anthropic", "method": "claudeai"}, http.StatusOK)
	at = newAttempt(l, "claude")
	sec.Register("agent code (claude)", "fake-authorization-code")
	post("attempts/"+at.ID+"/code", map[string]string{"code": "fake-authorization-code"}, http.StatusOK)

	l = post("login", map[string]string{"agent": "codex", "target": "openai", "method": "chatgpt"}, http.StatusOK)
	at = newAttempt(l, "codex")
	u, err := url.Parse(at.URL)
	is.NoErr(err) // the page to open
	cb, err := url.Parse(u.Query().Get("redirect_uri"))
	is.NoErr(err) // names codex's listener
	address := "http://localhost:" + cb.Port() + cb.Path + "?code=fake-code&state=" + u.Query().Get("state")
	sec.Register("agent redirect address", address)
	sec.Register("agent redirect code", "fake-code")
	l = post("attempts/"+at.ID+"/redirect", map[string]string{"address": address}, http.StatusOK)
	for _, a := range l.Attempts {
		if a.ID == at.ID {
			is.Equal(a.State, hub.AttemptComplete) // logged in through codex's listener
		}
	}
	l = ready()
	for _, a := range l.Agents {
		if a.Agent == "codex" {
			is.True(strings.Contains(a.Targets[0].Credentials[0].Label, "ChatGPT")) // the new login replaced the key
		}
	}
	post("logout", map[string]string{"agent": "codex", "target": "openai", "credential": "chatgpt"}, http.StatusOK)
}
