package fakes_test

import (
	"net/url"
	"testing"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestAgentLoginDriver(t *testing.T) {
	for _, browser := range []string{fakes.FakeCodeMethod, fakes.FakeRedirectMethod, fakes.FakeDeviceMethod} {
		t.Run(browser, func(t *testing.T) {
			porttest.AgentLoginDriver(t, func(*testing.T) porttest.AgentLoginScene {
				return agentScene{fakes.NewFakeAgent("alpha", "Alpha"), browser}
			})
		})
	}
}

// agentScene plays the person for a FakeAgent.
type agentScene struct {
	a       *fakes.FakeAgent
	browser string
}

func (s agentScene) Driver() hub.AgentLoginDriver { return s.a }

func (s agentScene) Missing() hub.AgentLoginDriver {
	m := fakes.NewFakeAgent("alpha", "Alpha")
	m.SetInstalled(false)
	return m
}

func (s agentScene) Target() string             { return fakes.FakeTarget }
func (s agentScene) KeyLogin() (string, string) { return fakes.FakeKeyMethod, "sk-porttest" }
func (s agentScene) BrowserLogin() string       { return s.browser }

func (s agentScene) Finish(t *testing.T, ch hub.AgentLoginChallenge) string {
	switch ch.Completion {
	case hub.CompletionCode:
		return s.a.Code(ch)
	case hub.CompletionRedirect:
		return "http://127.0.0.1:1455/auth/callback?code=" + url.QueryEscape(s.a.Code(ch))
	}
	if !s.a.Approve() {
		t.Fatal("no device login to approve")
	}
	return ""
}
