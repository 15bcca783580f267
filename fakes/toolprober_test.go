package fakes_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestToolProber(t *testing.T) {
	porttest.ToolProber(t, func(*testing.T) porttest.ToolScene { return toolScene{fakes.NewToolProber()} })
}

// toolScene scripts the fake as the suite asks.
type toolScene struct{ p *fakes.ToolProber }

func (s toolScene) Prober(path ...string) hub.ToolProber {
	s.p.SetPath(path...)
	return s.p
}

func (s toolScene) Genuine(p string, tool hub.CredentialToolName, version string) {
	s.p.Install(p, tool, version)
}

func (s toolScene) Impostor(p string, _ hub.CredentialToolName) { s.p.Install(p, "frob", "frob 1.0") }

func (s toolScene) Remove(p string) { s.p.Remove(p) }

func TestAToolProbeFailsAsScripted(t *testing.T) {
	is := is.New(t)
	p := fakes.NewToolProber("/usr/bin")
	p.Fail("/usr/bin/gh", hub.ReadinessResult{Message: hub.ToolMsgGitHubCLITooOld})
	rec := p.Probe(t.Context(), hub.ToolGH, "")
	is.Equal(rec.Path, "/usr/bin/gh")                                                                                                          // found on PATH
	is.Equal(rec.Results[1], hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: hub.ToolMsgGitHubCLITooOld}) // the scripted failure
	is.Equal(rec.Version, "")                                                                                                                  // no version
	is.True(rec.Guidance != "")                                                                                                                // guidance
}

func TestAVersionedToolInstalledWithoutAVersionReportsNone(t *testing.T) {
	is := is.New(t)
	p := fakes.NewToolProber("/usr/bin")
	p.Install("/usr/bin/git", hub.ToolGit, "")
	is.Equal(p.Probe(t.Context(), hub.ToolGit, "").Results[1].Message, hub.ToolMsgNoVersion) // as the real one reads an empty output
}

func TestTheToolProberFakeRecordsWhatRan(t *testing.T) {
	is := is.New(t)
	p := fakes.NewToolProber("/usr/bin")
	p.Install("/usr/bin/ssh", hub.ToolSSH, "OpenSSH_9.2p1")
	p.Probe(t.Context(), hub.ToolSSH, "")
	p.Probe(t.Context(), hub.ToolSSH, "/opt/ssh") // stale: nothing runs
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p.Probe(ctx, hub.ToolSSH, "") // cancelled: nothing runs
	is.Equal(p.Probes(), []fakes.ToolProbe{
		{Tool: hub.ToolSSH, Ran: "/usr/bin/ssh"},
		{Tool: hub.ToolSSH, Override: "/opt/ssh"},
		{Tool: hub.ToolSSH},
	}) // one probe ran
}
