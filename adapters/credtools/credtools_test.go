package credtools_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/credtools"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestProber(t *testing.T) {
	porttest.ToolProber(t, func(t *testing.T) porttest.ToolScene { return scriptScene{t} })
}

// scriptScene makes the suite's executables shell scripts.
type scriptScene struct{ t *testing.T }

func (s scriptScene) Prober(path ...string) hub.ToolProber {
	return credtools.New(credtools.Options{Path: strings.Join(path, string(os.PathListSeparator))})
}

func (s scriptScene) Genuine(p string, tool hub.CredentialToolName, version string) {
	script(s.t, p, genuine(tool, version))
}

func (s scriptScene) Impostor(p string, _ hub.CredentialToolName) { script(s.t, p, impostor) }

func (s scriptScene) Remove(p string) {
	if err := os.Remove(p); err != nil {
		s.t.Fatal(err)
	}
}

// TestTheToolsOfThisMachineAreIdentified probes the real tools installed
// here (OpenSSH's client tools, GnuPG, git: .ci/run installs them) on
// this process's PATH, as the Hub does; gh and glab, which are not
// installed, read as not found, with guidance.
func TestTheToolsOfThisMachineAreIdentified(t *testing.T) {
	p := credtools.New(credtools.Options{Path: os.Getenv("PATH")})
	for _, c := range []struct {
		tool          hub.CredentialToolName
		versionPrefix string // "" for the usage tools, which report none
	}{
		{hub.ToolSSH, "OpenSSH_"},
		{hub.ToolSSHAgent, ""},
		{hub.ToolSSHAdd, ""},
		{hub.ToolSSHKeygen, ""},
		{hub.ToolGPG, "gpg (GnuPG) "},
		{hub.ToolGPGConf, "gpgconf (GnuPG) "},
		{hub.ToolGit, "git version "},
	} {
		t.Run(string(c.tool), func(t *testing.T) {
			is := is.New(t)
			path := lookPath(t, string(c.tool))
			rec := p.Probe(t.Context(), c.tool, "")
			is.Equal(rec.Path, path)                                         // found where a shell finds it
			is.Equal(rec.Results[1].Status, hub.StatusReady)                 // identified
			is.True(strings.HasPrefix(rec.Version, c.versionPrefix))         // with its version line
			is.Equal(rec.Version == "", c.versionPrefix == "")               // and only when it has one
			is.Equal(rec.Guidance, "")                                       // no guidance
			is.Equal(p.Probe(t.Context(), c.tool, path), hub.CredentialTool{ // the same as an override
				Tool: c.tool, Path: path, Overridden: true, Version: rec.Version, Results: rec.Results,
			})
		})
	}
	for _, tool := range []hub.CredentialToolName{hub.ToolGH, hub.ToolGLab} {
		t.Run(string(tool), func(t *testing.T) {
			is := is.New(t)
			if path, err := exec.LookPath(string(tool)); err == nil {
				t.Skipf("%s is installed here (%s)", tool, path)
			}
			is.Equal(p.Probe(t.Context(), tool, ""), hub.CredentialTool{
				Tool:     tool,
				Results:  []hub.ReadinessResult{{Layer: hub.LayerBinary, Status: hub.StatusUnavailable, Message: hub.ToolMsgNotFound}},
				Guidance: "Install " + string(tool) + " with the system package manager, or configure its absolute executable path.",
			}) // not found, with guidance
		})
	}
}

// TestARealToolAsAnotherOneIsNotIdentified gives each real tool's path as
// the override of another tool: each one's probe fails as that other
// tool's, so none passes for another.
func TestARealToolAsAnotherOneIsNotIdentified(t *testing.T) {
	p := credtools.New(credtools.Options{Path: os.Getenv("PATH")})
	installed := []hub.CredentialToolName{hub.ToolSSH, hub.ToolSSHAgent, hub.ToolSSHAdd, hub.ToolSSHKeygen, hub.ToolGPG, hub.ToolGPGConf, hub.ToolGit}
	for _, as := range installed {
		for _, tool := range hub.CredentialTools() {
			if tool == as {
				continue
			}
			t.Run(string(as)+" as "+string(tool), func(t *testing.T) {
				is := is.New(t)
				rec := p.Probe(t.Context(), tool, lookPath(t, string(as)))
				is.Equal(rec.Results[0].Status, hub.StatusReady)       // it runs
				is.Equal(rec.Results[1].Status, hub.StatusUnavailable) // but is not the tool
				is.Equal(rec.Version, "")                              // and reports no version
			})
		}
	}
}

// TestGuidanceNamesThePackage checks the guidance the earlier system gave
// on each platform.
func TestGuidanceNamesThePackage(t *testing.T) {
	for _, c := range []struct {
		tool hub.CredentialToolName
		goos string
		want string
	}{
		{hub.ToolSSHAdd, "linux", "Install OpenSSH with the system package manager, or configure its absolute executable path."},
		{hub.ToolGPGConf, "darwin", "Install GnuPG with a trusted macOS package manager, or configure its absolute executable path."},
		{hub.ToolGLab, "freebsd", "Install glab for this platform, or configure its absolute executable path."},
	} {
		t.Run(c.goos+"/"+string(c.tool), func(t *testing.T) {
			is := is.New(t)
			is.Equal(hub.ToolGuidance(c.tool, c.goos), c.want) // the earlier system's words
		})
	}
	is := is.New(t)
	rec := credtools.New(credtools.Options{}).Probe(t.Context(), hub.ToolSSH, "")
	is.Equal(rec.Guidance, hub.ToolGuidance(hub.ToolSSH, runtime.GOOS)) // for the Hub's own platform
}

// BenchmarkProbeEveryTool probes the nine tools on this machine's PATH,
// one after another, as listing them does.
func BenchmarkProbeEveryTool(b *testing.B) {
	p := credtools.New(credtools.Options{Path: os.Getenv("PATH")})
	for b.Loop() {
		for _, tool := range hub.CredentialTools() {
			p.Probe(b.Context(), tool, "")
		}
	}
}
