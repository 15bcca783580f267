package fakes

import (
	"context"
	"errors"
	"path"
	"runtime"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.ToolProber = (*ToolProber)(nil)

// ToolProber is a hub.ToolProber over scripted executables. Tests script
// what each absolute path holds (Install, Fail, Remove) and which folders
// PATH has (NewToolProber, SetPath); Probe finds a tool as the real
// prober does — at its override when one is set (an absolute path that
// holds something), and then never on PATH; else in the first PATH folder
// holding it — and answers what its path holds, in the hub.ToolMsg texts:
//   - a tool Installed as this tool: ready, with its version (none for the
//     usage tools; a versioned tool installed without one did not report
//     a compatible version);
//   - a tool Installed as another tool: it did not identify as this one;
//   - a Fail: the version layer it was given.
//
// The fake reads no version: an old gh is scripted with Fail. A probe
// whose ctx has ended runs nothing and reads as cancelled or timed out,
// as the real one does. Records are a function of the script alone.
// Safe for concurrent use.
type ToolProber struct {
	mu     sync.Mutex
	path   []string
	at     map[string]toolScript
	probes []ToolProbe
}

// toolScript is what one path holds.
type toolScript struct {
	tool    hub.CredentialToolName
	version string
	fail    *hub.ReadinessResult
}

// ToolProbe is one probe the fake answered.
type ToolProbe struct {
	Tool     hub.CredentialToolName
	Override string
	// Ran is the path whose probe ran: "" when none did (nothing found,
	// a stale override, ctx ended).
	Ran string
}

// NewToolProber returns a fake whose PATH holds the folders path, in
// order, and nothing else anywhere.
func NewToolProber(path ...string) *ToolProber {
	return &ToolProber{path: slices.Clone(path), at: map[string]toolScript{}}
}

// SetPath replaces PATH's folders.
func (p *ToolProber) SetPath(path ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.path = slices.Clone(path)
}

// Install puts at the absolute path at an executable that answers as the
// genuine tool, reporting version (ignored for the usage tools, which
// report none).
func (p *ToolProber) Install(at string, tool hub.CredentialToolName, version string) {
	p.put(at, toolScript{tool: tool, version: version})
}

// Fail puts at the absolute path at an executable whose probe fails with
// the version layer result (its Layer and Status are set by the fake:
// version, unavailable), such as hub.ToolMsgTimedOut.
func (p *ToolProber) Fail(at string, result hub.ReadinessResult) {
	result.Layer, result.Status = hub.LayerVersion, hub.StatusUnavailable
	p.put(at, toolScript{fail: &result})
}

// Remove removes what is at the path at.
func (p *ToolProber) Remove(at string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.at, at)
}

func (p *ToolProber) put(at string, s toolScript) {
	if !path.IsAbs(at) {
		panic("fakes.ToolProber: a scripted executable needs an absolute path: " + at)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at[path.Clean(at)] = s
}

// Probes returns the probes answered so far, in order.
func (p *ToolProber) Probes() []ToolProbe {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.probes)
}

// Probe finds tool and answers what its path holds.
func (p *ToolProber) Probe(ctx context.Context, tool hub.CredentialToolName, override string) hub.CredentialTool {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := hub.CredentialTool{Tool: tool, Path: override, Overridden: override != ""}
	notReady := func(results ...hub.ReadinessResult) hub.CredentialTool {
		rec.Results = results
		rec.Guidance = hub.ToolGuidance(tool, runtime.GOOS)
		return rec
	}
	probe := ToolProbe{Tool: tool, Override: override}
	defer func() { p.probes = append(p.probes, probe) }()

	script, found := toolScript{}, false
	switch {
	case !slices.Contains(hub.CredentialTools(), tool):
		return notReady(readiness(hub.LayerBinary, hub.StatusUnavailable, hub.ToolMsgNotFound))
	case rec.Overridden:
		if script, found = p.at[path.Clean(override)]; !found || !path.IsAbs(override) {
			return notReady(readiness(hub.LayerBinary, hub.StatusUnavailable, hub.ToolMsgOverrideStale))
		}
	default:
		for _, dir := range p.path {
			at := path.Join(dir, string(tool))
			if script, found = p.at[at]; found && path.IsAbs(dir) {
				rec.Path = at
				break
			}
			found = false
		}
		if !found {
			return notReady(readiness(hub.LayerBinary, hub.StatusUnavailable, hub.ToolMsgNotFound))
		}
	}
	binary := readiness(hub.LayerBinary, hub.StatusReady, hub.ToolMsgFound)
	runtimeLayer := readiness(hub.LayerRuntime, hub.StatusNotApplicable, hub.ToolMsgRuntimeNotTested)
	version := func() hub.ReadinessResult {
		switch err := ctx.Err(); {
		case errors.Is(err, context.DeadlineExceeded):
			return readiness(hub.LayerVersion, hub.StatusUnavailable, hub.ToolMsgTimedOut)
		case err != nil:
			return readiness(hub.LayerVersion, hub.StatusUnavailable, hub.ToolMsgCancelled)
		}
		probe.Ran = rec.Path
		switch {
		case script.fail != nil:
			return *script.fail
		case script.tool != tool:
			return readiness(hub.LayerVersion, hub.StatusUnavailable, hub.ToolMsgNotIdentified)
		case !hub.ToolReportsVersion(tool):
			return readiness(hub.LayerVersion, hub.StatusReady, hub.ToolMsgResponded)
		case script.version == "":
			return readiness(hub.LayerVersion, hub.StatusUnavailable, hub.ToolMsgNoVersion)
		}
		rec.Version = script.version
		return readiness(hub.LayerVersion, hub.StatusReady, hub.ToolMsgVersionReported)
	}()
	if version.Status != hub.StatusReady {
		return notReady(binary, version, runtimeLayer)
	}
	rec.Results = []hub.ReadinessResult{binary, version, runtimeLayer}
	return rec
}

func readiness(layer, status, msg string) hub.ReadinessResult {
	return hub.ReadinessResult{Layer: layer, Status: status, Message: msg}
}
