package service

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/wharfhub/wharf/hub"
)

// The credential tools: each probed by the ToolProber (bounded in time and
// output), listed with its readiness, and given an absolute override that
// never falls back to PATH. Where each tool was last found is kept
// (toolPaths): a session's projection names the paths of the tools it
// runs, so a path that changes makes the running sessions that use it
// need a restart.

// maxToolPathBytes bounds an override path (research §9).
const maxToolPathBytes = 32768

var (
	errToolName     = hub.Errorf(hub.Invalid, "credential tool is invalid")
	errToolPath     = hub.Errorf(hub.Invalid, "tool path must be an absolute path of at most 32768 bytes without control characters")
	errToolRejected = "tool override failed validation: "
)

// toolPaths is where each tool was last found.
type toolPaths struct {
	mu sync.Mutex
	at map[hub.CredentialToolName]string
}

// of returns the last known path of each of tools ("" when never found).
func (t *toolPaths) of(tools []hub.CredentialToolName) map[hub.CredentialToolName]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[hub.CredentialToolName]string, len(tools))
	for _, tool := range tools {
		out[tool] = t.at[tool]
	}
	return out
}

// saw records the paths records found and reports whether any differs
// from what was known.
func (t *toolPaths) saw(records []hub.CredentialTool) (changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at == nil {
		t.at = map[hub.CredentialToolName]string{}
	}
	for _, r := range records {
		if old, ok := t.at[r.Tool]; !ok || old != r.Path {
			changed = changed || ok
			t.at[r.Tool] = r.Path
		}
	}
	return changed
}

// refresh probes tools and returns where each is now.
func (t *toolPaths) refresh(ctx context.Context, h *Hub, tools []hub.CredentialToolName) map[hub.CredentialToolName]string {
	h.probe(ctx, tools)
	return t.of(tools)
}

// probe runs the probes of tools at once, records where they were found
// (a changed path may show as credentialRestartRequired) and returns the
// records in tools' order.
func (h *Hub) probe(ctx context.Context, tools []hub.CredentialToolName) []hub.CredentialTool {
	_, _, overrides, err := h.catalog(ctx)
	if err != nil {
		overrides = nil // probe PATH: a record then says what it found there
	}
	out := make([]hub.CredentialTool, len(tools))
	var wg sync.WaitGroup
	for i, tool := range tools {
		wg.Go(func() { out[i] = h.tools.Probe(ctx, tool, overrides[tool]) })
	}
	wg.Wait()
	if h.toolPaths.saw(out) {
		h.settle(ctx, toolPathsSeen{})
	}
	return out
}

// CredentialTools probes every tool and lists them, in the contract's
// order (hubListCredentialTools). A missing tool is a record saying so,
// never an error.
func (h *Hub) CredentialTools(ctx context.Context) []hub.CredentialTool {
	return h.probe(ctx, hub.CredentialTools())
}

// SetCredentialTool sets (path non-nil) or clears (nil) a tool's override
// (hubSetCredentialTool). A path is probed first: one that does not
// answer as the tool is refused (Invalid "tool override failed
// validation: <tool>") and nothing changes.
func (h *Hub) SetCredentialTool(ctx context.Context, name string, override *string) (hub.CredentialTool, error) {
	tool, err := toolNamed(name)
	if err != nil {
		return hub.CredentialTool{}, err
	}
	value := ""
	if override != nil {
		if value, err = checkToolPath(*override); err != nil {
			return hub.CredentialTool{}, err
		}
		rec := h.tools.Probe(ctx, tool, value)
		if !versionReady(rec) {
			return hub.CredentialTool{}, hub.Errorf(hub.Invalid, "%s%s", errToolRejected, tool)
		}
	}
	if err := h.commit(ctx, func(tx *writes) error { return tx.PutCredentialToolOverride(tool, value) }); err != nil {
		return hub.CredentialTool{}, hub.Wrap(hub.Internal, err, "the tool override could not be stored")
	}
	return h.probe(ctx, []hub.CredentialToolName{tool})[0], nil
}

// TestCredentialTool probes one tool again (hubTestCredentialTool).
func (h *Hub) TestCredentialTool(ctx context.Context, name string) (hub.CredentialTool, error) {
	tool, err := toolNamed(name)
	if err != nil {
		return hub.CredentialTool{}, err
	}
	return h.probe(ctx, []hub.CredentialToolName{tool})[0], nil
}

// toolNamed returns the tool called name, Invalid when there is none.
func toolNamed(name string) (hub.CredentialToolName, error) {
	i := slices.Index(hub.CredentialTools(), hub.CredentialToolName(name))
	if i < 0 {
		return "", errToolName
	}
	return hub.CredentialTools()[i], nil
}

// checkToolPath checks an override: absolute, clean of control
// characters, bounded. It is kept as given (cleaned of "." and ".."
// elements, which name the same file); whether it works is the probe's.
func checkToolPath(p string) (string, error) {
	if p == "" || len(p) > maxToolPathBytes || !path.IsAbs(p) ||
		strings.IndexFunc(p, func(r rune) bool { return unicode.Is(unicode.Cc, r) || r == unicode.ReplacementChar }) >= 0 {
		return "", errToolPath
	}
	return path.Clean(p), nil
}

// versionReady reports whether a probe found the tool answering as
// itself: its version layer is ready.
func versionReady(rec hub.CredentialTool) bool {
	return slices.ContainsFunc(rec.Results, func(r hub.ReadinessResult) bool {
		return r.Layer == hub.LayerVersion && r.Status == hub.StatusReady
	})
}
