package credtools

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.ToolProber = (*Prober)(nil)

// Defaults for Options.
const (
	// DefaultTimeout bounds a probe until its process exits.
	DefaultTimeout = 5 * time.Second
	// DefaultWaitDelay bounds how long a probe's output may stay open
	// once its process group is dead.
	DefaultWaitDelay = time.Second
)

// Options configures a Prober.
type Options struct {
	// Path is the Hub's PATH: where a tool without an override is looked
	// for, and the PATH each probe runs with. The daemon gives its own
	// environment's; "" finds nothing.
	Path string
	// Timeout bounds each probe until its process exits; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// WaitDelay bounds how long a probe's output may stay open after its
	// process group was killed (only a process that left the group can
	// hold it); zero means DefaultWaitDelay. A probe takes at most Timeout
	// and WaitDelay.
	WaitDelay time.Duration
}

// Prober is a hub.ToolProber over os/exec. It keeps no state between
// probes and is safe for concurrent use.
type Prober struct {
	path      string
	timeout   time.Duration
	waitDelay time.Duration
	goos      string
}

// New returns a Prober.
func New(opts Options) *Prober {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = DefaultWaitDelay
	}
	return &Prober{path: opts.Path, timeout: opts.Timeout, waitDelay: opts.WaitDelay, goos: runtime.GOOS}
}

// Probe finds tool, at override when it is set, else on the Hub's PATH,
// runs its probe and says whether it is ready (see the package doc).
func (p *Prober) Probe(ctx context.Context, tool hub.CredentialToolName, override string) hub.CredentialTool {
	rec := hub.CredentialTool{Tool: tool, Path: override, Overridden: override != ""}
	notReady := func(results ...hub.ReadinessResult) hub.CredentialTool {
		rec.Results = results
		rec.Guidance = hub.ToolGuidance(tool, p.goos)
		return rec
	}
	arg, known := probeArg[tool]
	switch {
	case !known:
		return notReady(binary(hub.StatusUnavailable, hub.ToolMsgNotFound))
	case rec.Overridden && !executable(override):
		return notReady(binary(hub.StatusUnavailable, hub.ToolMsgOverrideStale))
	case !rec.Overridden:
		if rec.Path = lookPath(string(tool), p.path); rec.Path == "" {
			return notReady(binary(hub.StatusUnavailable, hub.ToolMsgNotFound))
		}
	}
	found := binary(hub.StatusReady, hub.ToolMsgFound)
	runtimeLayer := hub.ReadinessResult{Layer: hub.LayerRuntime, Status: hub.StatusNotApplicable, Message: hub.ToolMsgRuntimeNotTested}
	version, why := verdict(tool, p.run(ctx, rec.Path, arg))
	if why != "" {
		return notReady(found, hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: why}, runtimeLayer)
	}
	msg := hub.ToolMsgResponded
	if hub.ToolReportsVersion(tool) {
		rec.Version, msg = version, hub.ToolMsgVersionReported
	}
	rec.Results = []hub.ReadinessResult{found, {Layer: hub.LayerVersion, Status: hub.StatusReady, Message: msg}, runtimeLayer}
	return rec
}

// verdict reads a probe's outcome: the version tool reported and "", or
// why it is not the ready tool.
func verdict(tool hub.CredentialToolName, o outcome) (version, why string) {
	switch {
	case !o.started && o.ctxErr == nil:
		return "", hub.ToolMsgNotStarted
	case o.timedOut, o.heldOpen, errors.Is(o.ctxErr, context.DeadlineExceeded):
		return "", hub.ToolMsgTimedOut
	case o.ctxErr != nil:
		return "", hub.ToolMsgCancelled
	case o.overflow:
		return "", hub.ToolMsgTooLong
	}
	reports := hub.ToolReportsVersion(tool)
	version = versionLine(o.stdout, o.stderr)
	exitOK := o.exit == 0 || !reports && (o.exit == 1 || o.exit == 2)
	switch {
	case !exitOK, reports && version == "":
		return "", hub.ToolMsgNoVersion
	case !identifies(tool, version, o.stdout, o.stderr):
		return "", hub.ToolMsgNotIdentified
	}
	if msg := tooOld(tool, version); msg != "" {
		return "", msg
	}
	return version, ""
}

func binary(status, msg string) hub.ReadinessResult {
	return hub.ReadinessResult{Layer: hub.LayerBinary, Status: status, Message: msg}
}
