package gemini_test

import (
	"testing"

	"github.com/wharfhub/wharf/adapters/agentaccount/gemini"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// TestTheConformanceSuite runs the agent-login contract on the Gemini
// CLI driver over the fake gemini: a Google login finished with the code
// its page shows; keys are refused (Gemini CLI takes them from the
// environment only).
func TestTheConformanceSuite(t *testing.T) {
	porttest.AgentLoginDriver(t, func(t *testing.T) porttest.AgentLoginScene { return geminiScene{newSetup(t, nil)} })
}

type geminiScene struct{ s *setup }

func (c geminiScene) Driver() hub.AgentLoginDriver { return c.s.driver }

func (c geminiScene) Missing() hub.AgentLoginDriver {
	return gemini.New(gemini.Options{Env: []string{"HOME=" + c.s.home, "PATH=" + c.s.home}})
}

func (c geminiScene) Target() string             { return "google" }
func (c geminiScene) KeyLogin() (string, string) { return "", "" }
func (c geminiScene) BrowserLogin() string       { return "oauth-personal" }
func (c geminiScene) Finish(*testing.T, hub.AgentLoginChallenge) string {
	return "fake-authorization-code"
}
