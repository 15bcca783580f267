package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// accounts posts body to an agent-accounts path and decodes the listing
// of a 200.
func (s *testServer) accounts(t *testing.T, path, body string, auth []string) hub.AgentAccounts {
	t.Helper()
	method := "POST"
	if body == "" {
		method = "GET"
	}
	r := s.do(t, method, "/api/hub/agent-accounts"+path, body, auth...)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, r.status, r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s: Cache-Control %q", path, r.header.Get("Cache-Control"))
	}
	var l hub.AgentAccounts
	r.json(t, &l)
	return l
}

// pendingAttempt is the listing's one pending attempt.
func pendingAttempt(l hub.AgentAccounts) hub.AgentLoginAttempt {
	for _, a := range l.Attempts {
		if a.State == hub.AttemptPending {
			return a
		}
	}
	return hub.AgentLoginAttempt{}
}

func attemptOf(l hub.AgentAccounts, id string) hub.AgentLoginAttempt {
	for _, a := range l.Attempts {
		if a.ID == id {
			return a
		}
	}
	return hub.AgentLoginAttempt{}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnAgentIsLoggedInAndOutOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))

	l := s.accounts(t, "", "", auth)
	is.Equal(len(l.Agents), 1)                         // the one agent
	is.Equal(l.Agents[0].State, hub.AgentRuntimeReady) // its runtime started

	s.secret("sk-http-key-1")
	l = s.accounts(t, "/key", jsonOf(t, map[string]any{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeKeyMethod,
		"key": "sk-http-key-1", "answers": map[string]string{"region": "eu"}}), auth)
	is.Equal(len(l.Agents[0].Targets[0].Credentials), 1) // the key login is listed
	keyID := l.Agents[0].Targets[0].Credentials[0].ID

	l = s.accounts(t, "/login", jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeCodeMethod}), auth)
	at := l.Attempts[0]
	is.Equal(at.State, hub.AttemptPending) // a pending login with its URL
	code := "code-" + strings.Split(at.URL, "state=")[1]
	s.secret(code)
	l = s.accounts(t, "/attempts/"+at.ID+"/code", jsonOf(t, map[string]string{"code": code}), auth)
	is.Equal(l.Attempts[0].State, hub.AttemptComplete) // logged in with the code

	l = s.accounts(t, "/login", jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeRedirectMethod}), auth)
	at = pendingAttempt(l)
	is.Equal(at.Completion, hub.CompletionRedirect)
	state := strings.Split(strings.Split(at.URL, "state=")[1], "&")[0]
	address := "http://127.0.0.1:1455/auth/callback?code=code-" + state
	s.secret(address)
	l = s.accounts(t, "/attempts/"+at.ID+"/redirect", jsonOf(t, map[string]string{"address": address}), auth)
	is.Equal(attemptOf(l, at.ID).State, hub.AttemptComplete) // logged in through the listener
	is.Equal(len(s.agent.Delivered()), 1)                    // requested once

	l = s.accounts(t, "/login", jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeDeviceMethod}), auth)
	at = pendingAttempt(l)
	is.Equal(at.Completion, hub.CompletionDevice)
	l = s.accounts(t, "/attempts/"+at.ID+"/cancel", `{}`, auth)
	is.Equal(attemptOf(l, at.ID).State, hub.AttemptCancelled) // cancelled

	l = s.accounts(t, "/activate", jsonOf(t, map[string]string{"agent": "alpha", "credential": keyID}), auth)
	for _, c := range l.Agents[0].Targets[0].Credentials {
		is.Equal(c.Active, c.ID == keyID) // the key login is active again
	}
	l = s.accounts(t, "/logout", jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "credential": keyID}), auth)
	is.Equal(len(l.Agents[0].Targets[0].Credentials), 2) // the key login is gone
	for _, c := range l.Agents[0].Targets[0].Credentials {
		is.True(c.ID != keyID)
	}
}

func TestBadAgentAccountRequestsAreRefusedNamingTheField(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.accounts(t, "", "", auth)
	l := s.accounts(t, "/login", jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeCodeMethod}), auth)
	pending := l.Attempts[0].ID
	many := map[string]string{}
	for i := range 33 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	key := func(k string) string {
		return jsonOf(t, map[string]string{"agent": "alpha", "target": fakes.FakeTarget, "method": fakes.FakeKeyMethod, "key": k})
	}
	for _, c := range []struct {
		name, path, body string
		status           int
		field, message   string
	}{
		{"a body over 96 KiB", "/key", key(strings.Repeat("k", 97<<10)), 400, "", "The request is too large."},
		{"an unknown field", "/key", `{"agent":"alpha","target":"t","method":"m","key":"k","extra":1}`, 400, "extra", "Unexpected field extra."},
		{"a blank agent", "/login", `{"agent":" ","target":"t","method":"m"}`, 400, "agent", ""},
		{"a blank target", "/login", `{"agent":"alpha","target":"","method":"m"}`, 400, "target", ""},
		{"a method of the wrong type", "/login", `{"agent":"alpha","target":"t","method":1}`, 400, "method", ""},
		{"answers over 32 entries", "/login", jsonOf(t, map[string]any{"agent": "alpha", "target": "t", "method": "m", "answers": many}), 400, "answers", ""},
		{"an answer over 4,096 bytes", "/login", jsonOf(t, map[string]any{"agent": "alpha", "target": "t", "method": "m", "answers": map[string]string{"a": strings.Repeat("v", 4097)}}), 400, "answers", ""},
		{"a key over 64 KiB", "/key", key(strings.Repeat("k", 64<<10+1)), 400, "key", ""},
		{"a key the agent refuses", "/key", key("not-a-key"), 400, "key", ""},
		{"an unknown agent", "/login", `{"agent":"nobody","target":"t","method":"m"}`, 400, "agent", ""},
		{"an unknown method", "/login", `{"agent":"alpha","target":"provider","method":"m"}`, 400, "method", ""},
		{"a code over 8,192 bytes", "/attempts/" + pending + "/code", jsonOf(t, map[string]string{"code": strings.Repeat("c", 8193)}), 400, "code", ""},
		{"an address over 8,192 bytes", "/attempts/" + pending + "/redirect", jsonOf(t, map[string]string{"address": strings.Repeat("a", 8193)}), 400, "address", ""},
		{"an address for a code login", "/attempts/" + pending + "/redirect", `{"address":"http://localhost:1455/auth/callback?code=x"}`, 400, "address", ""},
		{"an attemptId over 64 characters", "/attempts/" + strings.Repeat("i", 65) + "/cancel", `{}`, 400, "attemptId", ""},
		{"an unknown attempt", "/attempts/unknown/code", `{"code":"c"}`, 404, "", "That login is no longer in progress."},
		{"a cancel with a body", "/attempts/" + pending + "/cancel", `{"why":"x"}`, 400, "why", ""},
		{"a logout of an unknown login", "/logout", `{"agent":"alpha","target":"provider","credential":"nope"}`, 400, "credential", ""},
		{"an activate without a credential", "/activate", `{"agent":"alpha"}`, 400, "credential", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			before := jsonOf(t, s.accounts(t, "", "", auth).Agents)
			r := s.do(t, "POST", "/api/hub/agent-accounts"+c.path, c.body, auth...)
			is.Equal(r.status, c.status) // the spec's status
			var e struct{ Error, Field string }
			r.json(t, &e)
			is.Equal(e.Field, c.field) // the field concerned
			if c.message != "" {
				is.Equal(e.Error, c.message) // the message
			}
			is.True(!strings.Contains(e.Error, "not-a-key"))                // never the value
			is.Equal(r.header.Get("Cache-Control"), "no-store")             // no-store
			is.Equal(jsonOf(t, s.accounts(t, "", "", auth).Agents), before) // nothing changed
		})
	}
}

func TestAnAgentNotInstalledAnswers409AndNoCredentialsAnswer401(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.agent.SetInstalled(false)
	l := s.accounts(t, "", "", auth)
	is.Equal(l.Agents[0].State, hub.AgentRuntimeNotInstalled) // listed as not installed
	r := s.do(t, "POST", "/api/hub/agent-accounts/login", `{"agent":"alpha","target":"provider","method":"code-login"}`, auth...)
	is.Equal(r.status, http.StatusConflict) // 409: not installed
	r = s.do(t, "GET", "/api/hub/agent-accounts", "")
	is.Equal(r.status, http.StatusUnauthorized)         // 401 without a session
	is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
}
