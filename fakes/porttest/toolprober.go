package porttest

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// ToolScene is a world of executables for the ToolProber suite: the
// harness puts each executable where the suite asks and makes the prober
// that looks there. Paths are absolute, in folders the suite made
// (t.TempDir).
type ToolScene interface {
	// Prober returns the prober under test, whose Hub PATH holds the
	// folders path, in order.
	Prober(path ...string) hub.ToolProber
	// Genuine puts at p an executable that answers tool's probe as the
	// genuine tool does: a versioned tool with version as its first line,
	// a usage tool (version "") with its usage.
	Genuine(p string, tool hub.CredentialToolName, version string)
	// Impostor puts at p an executable that answers tool's probe
	// successfully, as another program, which mentions the tool.
	Impostor(p string, tool hub.CredentialToolName)
	// Remove removes what is at p.
	Remove(p string)
}

// GenuineVersions are version lines the genuine tools print, one per
// versioned tool ("" for the usage tools).
var GenuineVersions = map[hub.CredentialToolName]string{
	hub.ToolSSH:       "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026",
	hub.ToolSSHAgent:  "",
	hub.ToolSSHAdd:    "",
	hub.ToolSSHKeygen: "",
	hub.ToolGPG:       "gpg (GnuPG) 2.2.40",
	hub.ToolGPGConf:   "gpgconf (GnuPG) 2.2.40",
	hub.ToolGit:       "git version 2.39.5",
	hub.ToolGH:        "gh version 2.45.0 (2024-03-04)",
	hub.ToolGLab:      "glab 1.46.1 (58e5a5c5)",
}

// ToolProber runs the hub.ToolProber contract on the scenes newScene
// makes, a fresh one per subtest.
func ToolProber(t *testing.T, newScene func(t *testing.T) ToolScene) {
	t.Run("NothingOnPathReadsNotFoundForEveryTool", func(t *testing.T) {
		is := is.New(t)
		p := newScene(t).Prober(t.TempDir())
		for _, tool := range hub.CredentialTools() {
			is.Equal(p.Probe(t.Context(), tool, ""), notFound(tool)) // not found, with guidance
		}
	})

	t.Run("EveryGenuineToolOnPathIsReady", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		for _, tool := range hub.CredentialTools() {
			s.Genuine(filepath.Join(dir, string(tool)), tool, GenuineVersions[tool])
		}
		p := s.Prober(dir)
		for _, tool := range hub.CredentialTools() {
			is.Equal(p.Probe(t.Context(), tool, ""), ready(tool, filepath.Join(dir, string(tool)), false)) // ready, with its version
		}
	})

	t.Run("TheFirstPathFolderHoldingTheToolWins", func(t *testing.T) {
		is := is.New(t)
		s, empty, first, second := newScene(t), t.TempDir(), t.TempDir(), t.TempDir()
		s.Genuine(filepath.Join(first, "git"), hub.ToolGit, "git version 2.39.5")
		s.Genuine(filepath.Join(second, "git"), hub.ToolGit, "git version 2.45.0")
		rec := s.Prober(empty, first, second).Probe(t.Context(), hub.ToolGit, "")
		is.Equal(rec.Path, filepath.Join(first, "git")) // the first folder holding it
		is.Equal(rec.Version, "git version 2.39.5")     // and its version
	})

	t.Run("AnOverrideIsProbedInsteadOfPath", func(t *testing.T) {
		is := is.New(t)
		s, onPath, elsewhere := newScene(t), t.TempDir(), t.TempDir()
		s.Genuine(filepath.Join(onPath, "ssh"), hub.ToolSSH, "OpenSSH_8.9p1")
		override := filepath.Join(elsewhere, "my-ssh")
		s.Genuine(override, hub.ToolSSH, GenuineVersions[hub.ToolSSH])
		is.Equal(s.Prober(onPath).Probe(t.Context(), hub.ToolSSH, override), ready(hub.ToolSSH, override, true)) // the override's record
	})

	t.Run("AStaleOverrideNeverFallsBackToPath", func(t *testing.T) {
		s, onPath, elsewhere := newScene(t), t.TempDir(), t.TempDir()
		s.Genuine(filepath.Join(onPath, "ssh"), hub.ToolSSH, GenuineVersions[hub.ToolSSH])
		removed := filepath.Join(elsewhere, "ssh")
		s.Genuine(removed, hub.ToolSSH, GenuineVersions[hub.ToolSSH])
		p := s.Prober(onPath)
		is.New(t).Equal(p.Probe(t.Context(), hub.ToolSSH, removed), ready(hub.ToolSSH, removed, true)) // it worked once
		s.Remove(removed)
		for name, override := range map[string]string{
			"removed":  removed,
			"missing":  filepath.Join(elsewhere, "never-there"),
			"relative": "bin/ssh",
			"a folder": elsewhere,
		} {
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				is.Equal(p.Probe(t.Context(), hub.ToolSSH, override), hub.CredentialTool{
					Tool: hub.ToolSSH, Path: override, Overridden: true,
					Results:  []hub.ReadinessResult{{Layer: hub.LayerBinary, Status: hub.StatusUnavailable, Message: hub.ToolMsgOverrideStale}},
					Guidance: hub.ToolGuidance(hub.ToolSSH, runtime.GOOS),
				}) // reported as stale, not replaced by the ssh on PATH
			})
		}
	})

	t.Run("AnImpostorIsNotTheTool", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		for _, tool := range hub.CredentialTools() {
			s.Impostor(filepath.Join(dir, string(tool)), tool)
		}
		p := s.Prober(dir)
		for _, tool := range hub.CredentialTools() {
			is.Equal(p.Probe(t.Context(), tool, ""), notReady(tool, filepath.Join(dir, string(tool)), false, hub.ToolMsgNotIdentified)) // found, not identified
		}
	})

	t.Run("AnotherToolIsNotThisOne", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		git := filepath.Join(dir, "git")
		s.Genuine(git, hub.ToolGit, GenuineVersions[hub.ToolGit])
		rec := s.Prober().Probe(t.Context(), hub.ToolSSH, git)
		is.Equal(rec.Results[0], hub.ReadinessResult{Layer: hub.LayerBinary, Status: hub.StatusReady, Message: hub.ToolMsgFound}) // found
		is.Equal(rec.Results[1].Status, hub.StatusUnavailable)                                                                    // but not ssh
		is.Equal(rec.Version, "")                                                                                                 // and no version
		is.Equal(rec.Guidance, hub.ToolGuidance(hub.ToolSSH, runtime.GOOS))                                                       // with guidance
	})

	t.Run("AnUnknownToolIsNeverLookedFor", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		s.Genuine(filepath.Join(dir, "ssh"), hub.ToolSSH, GenuineVersions[hub.ToolSSH])
		tool := hub.CredentialToolName("./ssh")
		is.Equal(s.Prober(dir).Probe(t.Context(), tool, ""), notFound(tool)) // a name that would reach ssh is no tool
	})

	t.Run("AnEndedContextRunsNothing", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		s.Genuine(filepath.Join(dir, "git"), hub.ToolGit, GenuineVersions[hub.ToolGit])
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		is.Equal(s.Prober(dir).Probe(ctx, hub.ToolGit, ""), notReady(hub.ToolGit, filepath.Join(dir, "git"), false, hub.ToolMsgCancelled)) // found, probe cancelled
	})

	t.Run("ConcurrentProbesAgree", func(t *testing.T) {
		is := is.New(t)
		s, dir := newScene(t), t.TempDir()
		for i, tool := range hub.CredentialTools() {
			if i%2 == 0 {
				s.Genuine(filepath.Join(dir, string(tool)), tool, GenuineVersions[tool])
			} else {
				s.Impostor(filepath.Join(dir, string(tool)), tool)
			}
		}
		p := s.Prober(dir)
		tools := hub.CredentialTools()
		got := make([][2]hub.CredentialTool, len(tools))
		var wg sync.WaitGroup
		for i, tool := range tools {
			for round := range 2 {
				wg.Go(func() { got[i][round] = p.Probe(t.Context(), tool, "") })
			}
		}
		wg.Wait()
		for i, tool := range tools {
			want := ready(tool, filepath.Join(dir, string(tool)), false)
			if i%2 == 1 {
				want = notReady(tool, filepath.Join(dir, string(tool)), false, hub.ToolMsgNotIdentified)
			}
			is.Equal(got[i][0], want) // each probe answers for its own tool
			is.Equal(got[i][1], want) // and twice the same
		}
	})
}

// notFound is the record of a tool found nowhere.
func notFound(tool hub.CredentialToolName) hub.CredentialTool {
	return hub.CredentialTool{
		Tool:     tool,
		Results:  []hub.ReadinessResult{{Layer: hub.LayerBinary, Status: hub.StatusUnavailable, Message: hub.ToolMsgNotFound}},
		Guidance: hub.ToolGuidance(tool, runtime.GOOS),
	}
}

// ready is the record of the genuine tool at p, reporting its
// GenuineVersions line.
func ready(tool hub.CredentialToolName, p string, overridden bool) hub.CredentialTool {
	msg := hub.ToolMsgResponded
	if hub.ToolReportsVersion(tool) {
		msg = hub.ToolMsgVersionReported
	}
	return hub.CredentialTool{
		Tool: tool, Path: p, Overridden: overridden, Version: GenuineVersions[tool],
		Results: []hub.ReadinessResult{
			{Layer: hub.LayerBinary, Status: hub.StatusReady, Message: hub.ToolMsgFound},
			{Layer: hub.LayerVersion, Status: hub.StatusReady, Message: msg},
			{Layer: hub.LayerRuntime, Status: hub.StatusNotApplicable, Message: hub.ToolMsgRuntimeNotTested},
		},
	}
}

// notReady is the record of an executable at p whose probe failed, why
// saying how.
func notReady(tool hub.CredentialToolName, p string, overridden bool, why string) hub.CredentialTool {
	return hub.CredentialTool{
		Tool: tool, Path: p, Overridden: overridden,
		Results: []hub.ReadinessResult{
			{Layer: hub.LayerBinary, Status: hub.StatusReady, Message: hub.ToolMsgFound},
			{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: why},
			{Layer: hub.LayerRuntime, Status: hub.StatusNotApplicable, Message: hub.ToolMsgRuntimeNotTested},
		},
		Guidance: hub.ToolGuidance(tool, runtime.GOOS),
	}
}
