package opencode_test

import (
	"testing"

	"github.com/wharfhub/wharf/adapters/agentaccount/opencode"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// TestTheConformanceSuite runs the agent-login contract on the OpenCode
// driver over the fake `opencode serve`: its provider "fakecode", whose
// login finishes with a pasted code and which also takes a key.
func TestTheConformanceSuite(t *testing.T) {
	bin, err := fakeServer()
	if err != nil {
		t.Fatal(err)
	}
	porttest.AgentLoginDriver(t, func(t *testing.T) porttest.AgentLoginScene {
		return opencodeScene{bin: bin, h: newHome(t)}
	})
}

type opencodeScene struct {
	bin string
	h   *home
}

func (s opencodeScene) Driver() hub.AgentLoginDriver {
	return opencode.New(opencode.Options{Command: []string{s.bin}, Env: s.h.env})
}

func (s opencodeScene) Missing() hub.AgentLoginDriver {
	return opencode.New(opencode.Options{Env: []string{"PATH=" + s.h.dir, "HOME=" + s.h.dir}})
}

func (s opencodeScene) Target() string                                    { return "fakecode" }
func (s opencodeScene) KeyLogin() (string, string)                        { return "1", "sk-suite-key" }
func (s opencodeScene) BrowserLogin() string                              { return "0" }
func (s opencodeScene) Finish(*testing.T, hub.AgentLoginChallenge) string { return fakeCode }
