package docfeed

import (
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// Options tunes a Feed. The zero value is the production configuration;
// tests shorten the durations.
type Options struct {
	// Quiet is how long the tree must stay quiet before pending changes are
	// published, and MaxDelay bounds the wait after the first pending
	// change, so a tree that never rests still publishes. The repository
	// refresh is debounced the same way. Defaults 150 ms and 2 s.
	Quiet, MaxDelay time.Duration
	// BatchLimit bounds the upserts plus removals of one patch; the rest
	// follow in the next tick. Default 256.
	BatchLimit int
	// PollInterval is how often Git metadata (HEAD, index, refs...) is
	// checked for a change, only while subscribers exist. Default 5 s.
	PollInterval time.Duration
	// KeepAlive is the SSE comment interval of Handler. Default 15 s.
	KeepAlive time.Duration
	// QueueFrames and QueueBytes bound the undelivered patches of one
	// subscriber; past either, they are dropped and the subscriber gets a
	// fresh snapshot instead. Defaults 256 frames and 16 MiB.
	QueueFrames, QueueBytes int
	// Git is the git executable. Default "git", looked up in PATH.
	Git string
	// Env is the base environment of git commands. Default os.Environ().
	// GIT_* variables and the locale are always replaced (see gitcmd.Env).
	Env []string
	// GitTimeout bounds one git command; its process group is killed
	// after it. Default 60 s.
	GitTimeout time.Duration

	// Logger receives diagnostics; never file contents. Default: discard.
	Logger *slog.Logger
	// Build is the snapshot's BuildSummary. Default: read from the
	// binary's build information.
	Build *BuildSummary
	// WorkspaceAPIRevision is the snapshot's workspaceApiRevision; the
	// session passes its Revision. Default 24, the workspace revision whose
	// document shapes this package implements.
	WorkspaceAPIRevision int
	// DisableFollow turns the snapshot's initialFollow off.
	DisableFollow bool
	// Now is the clock for generatedAt and commit ages. Default time.Now.
	Now func() time.Time
	// Signatures, when set, checks the signatures of the newest commits
	// (signature.go); nil leaves every log entry without one.
	Signatures SignatureChecker
}

// Defaults of Options.
const (
	DefaultQuiet        = 150 * time.Millisecond
	DefaultMaxDelay     = 2 * time.Second
	DefaultBatchLimit   = 256
	DefaultPollInterval = 5 * time.Second
	DefaultKeepAlive    = childproto.DefaultKeepAlive // 15 s
	DefaultQueueFrames  = 256
	DefaultQueueBytes   = 16 << 20
	DefaultGitTimeout   = 60 * time.Second
)

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Quiet, DefaultQuiet)
	def(&o.MaxDelay, DefaultMaxDelay)
	def(&o.PollInterval, DefaultPollInterval)
	def(&o.KeepAlive, DefaultKeepAlive)
	def(&o.GitTimeout, DefaultGitTimeout)
	if o.BatchLimit <= 0 {
		o.BatchLimit = DefaultBatchLimit
	}
	if o.QueueFrames <= 0 {
		o.QueueFrames = DefaultQueueFrames
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.Git == "" {
		o.Git = "git"
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Build == nil {
		b := buildFromBinary()
		o.Build = &b
	}
	if o.WorkspaceAPIRevision == 0 {
		o.WorkspaceAPIRevision = 24
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// BuildSummary describes the build of the workspace child (the contract's
// BuildSummary).
type BuildSummary struct {
	Version            string `json:"version"`
	Branch             string `json:"branch"`
	CommitSha          string `json:"commitSha"`
	CommitShort        string `json:"commitShort"`
	Release            bool   `json:"release"`
	Identifier         string `json:"identifier"`
	BundledWebRevision int    `json:"bundledWebRevision"`
}

// buildFromBinary reads what the Go toolchain stamped into the binary. The
// branch is not stamped, so it stays empty; a build is a release when its
// module version is a tagged version rather than "(devel)" or a
// pseudo-version.
func buildFromBinary() BuildSummary {
	b := BuildSummary{Version: "(devel)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		b.Identifier = "wharf " + b.Version
		return b
	}
	if v := info.Main.Version; v != "" {
		b.Version = v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			b.CommitSha = s.Value
		}
	}
	b.CommitShort = b.CommitSha
	if len(b.CommitShort) > 12 {
		b.CommitShort = b.CommitShort[:12]
	}
	b.Release = strings.HasPrefix(b.Version, "v") && strings.Count(b.Version, "-") == 0 &&
		!strings.Contains(b.Version, "+dirty")
	b.Identifier = "wharf " + b.Version
	if b.CommitShort != "" {
		b.Identifier += " (" + b.CommitShort + ")"
	}
	return b
}
