package claude_test

import (
	"testing"

	"github.com/wharfhub/wharf/adapters/agentaccount/claude"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// TestTheConformanceSuite runs the agent-login contract on the Claude
// Code driver over the fake claude: a subscription login finished with
// the code its page shows; keys are refused (Claude Code takes them from
// the environment only).
func TestTheConformanceSuite(t *testing.T) {
	porttest.AgentLoginDriver(t, func(t *testing.T) porttest.AgentLoginScene { return claudeScene{newSetup(t)} })
}

type claudeScene struct{ s *setup }

func (c claudeScene) Driver() hub.AgentLoginDriver { return c.s.driver }

func (c claudeScene) Missing() hub.AgentLoginDriver {
	return claude.New(claude.Options{Env: []string{"HOME=" + c.s.home, "PATH=" + c.s.home}})
}

func (c claudeScene) Target() string             { return "anthropic" }
func (c claudeScene) KeyLogin() (string, string) { return "", "" }
func (c claudeScene) BrowserLogin() string       { return "claudeai" }
func (c claudeScene) Finish(*testing.T, hub.AgentLoginChallenge) string {
	return "fake-authorization-code"
}
