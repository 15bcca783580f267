package sshhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

var _ hub.Backend = (*Host)(nil)

// remoteTimeout bounds each command run on the host to stop or clean up
// after a session (a signal, a clean-up, a wait for its end) and each
// request to the master: a round trip, which a busy host or Hub answers
// slowly, and which a stop's grace only starts after.
const remoteTimeout = 10 * time.Second

// killWait bounds the wait for a session's end after its kill: the
// kill's own round trip is done by then, and what is left is the reap's
// (the forwards' cancel and the clean-up on the host, each within
// remoteTimeout).
const killWait = 2 * remoteTimeout

// Defaults of the Options durations.
const (
	DefaultReadyTimeout = 30 * time.Second
	DefaultStopGrace    = 3 * time.Second
	// DefaultDetachGrace is how long a session outlives a Hub that let
	// it go or lost it, waiting to be adopted.
	DefaultDetachGrace = 5 * time.Minute
	// DefaultRemoteRoot is where Wharf keeps its files on a host,
	// relative to the remote user's home.
	DefaultRemoteRoot = ".cache/wharf"
)

// Options configure a Host. The zero value of each optional field picks
// its default.
type Options struct {
	// Name names the host in the Hub: 1-32 lowercase ASCII letters,
	// digits and hyphens, beginning with a letter or digit. The backend
	// is "ssh:"+Name.
	Name string
	// Destination is what ssh is given: an alias of the Hub user's
	// ~/.ssh/config, or [user@]host. One beginning with '-' (an option to
	// ssh), or holding spaces or control characters, is refused.
	Destination string
	// RuntimeDir is the Hub-side private directory (created 0700 when
	// missing, refused when open to group or others) of the host's
	// master socket and its sessions' forwarded sockets. It must be short
	// enough for a Unix socket path (about 100 bytes) and hold no ':'
	// (ssh's forward syntax). Required.
	RuntimeDir string
	// SSH is the ssh command and any options of its own (tests add
	// -F <config>). Default: "ssh" from PATH.
	SSH []string
	// Binary is the local executable copied to the host and run there as
	// `wharf session`. Default: the running executable.
	Binary string
	// RemoteRoot is the host directory of Wharf's files (bin/, run/,
	// data/), relative to the remote user's home unless absolute.
	// Default DefaultRemoteRoot.
	RemoteRoot string
	// Env is the environment of the local ssh processes (ssh needs HOME
	// and SSH_AUTH_SOCK). Default: os.Environ() when New runs. The remote
	// session's environment is the remote login's, filtered (KeepEnv).
	Env []string
	// KeepEnv names variables of the host login's environment its
	// sessions keep beyond the basics every session keeps
	// (credenv.InheritedNames: PATH, HOME, the agents' store locations,
	// LC_* ...), say a proxy the host needs. Every other variable is
	// unset before the session starts, so an ambient credential on the
	// host never reaches it. Names are [A-Za-z_][A-Za-z0-9_]*.
	KeepEnv []string
	// Logger receives ssh's and the sessions' stderr and lifecycle
	// events. Default: discard.
	Logger *slog.Logger
	// ReadyTimeout bounds how long a session may take to become ready,
	// once the host is reached and the binary in place. Default
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopGrace is how long a stop waits after closing the session's
	// stdin before killing it, and then again for the kill to be
	// confirmed. Default DefaultStopGrace.
	StopGrace time.Duration
	// DetachGrace is how long a session outlives the Hub that let it go
	// (its close, or its crash) or lost its connection, for a Hub to
	// adopt it (Adopt) before it ends by itself. Default
	// DefaultDetachGrace; negative: sessions end with the Hub's hold on
	// them, and nothing is ever adopted.
	DetachGrace time.Duration
	// AgentCommands sets the command of a coding agent by id in every
	// session (childproto.Args.Agents); the commands run on the host.
	AgentCommands map[string][]string
}

// Host is the backend of one host. It is safe for concurrent use.
type Host struct {
	opts    Options
	log     *slog.Logger
	ctlPath string // the master's control socket

	// goos and goarch are what the host must run: the Hub's own.
	goos, goarch string

	connMu sync.Mutex // serializes connecting, installing and starting masters
	conn   *remote    // what the current master learned; nil until connected
	closed bool

	mu       sync.Mutex
	masters  []*master         // the connections (masters.go); the primary first
	sessions map[string]string // local socket path -> workspace id, from start to end
	// lingering are the workspaces whose session this Host let go or lost
	// the connection to: it may run on, in its grace, and a new start
	// adopts it rather than start another (adopt.go).
	lingering map[string]bool

	live   atomic.Int64 // sessions started and not yet ended
	copies atomic.Int64 // binaries copied to the host

	keepEnv string // the start script's $6: the login's variables a session keeps

	// starting bounds the starts in progress (maxStarting): each asks
	// the host for several channels at once, and a further master's login
	// is one of sshd's MaxStartups (10 unauthenticated at once).
	starting chan struct{}
}

// maxStarting is how many sessions of a host start at once.
const maxStarting = 8

// remote is what Wharf knows of the host once connected.
type remote struct {
	root      string // RemoteRoot, absolute on the host
	installed string // the remote path of the binary, once verified; "" before
}

// hashLen is the length of the hex hash naming a session's sockets and
// runtime files (of the workspace id) and the control socket (of the
// host's name).
const hashLen = 12

// maxSocketPath is the longest path a Unix socket can bind here: sun_path
// less its terminating NUL (107 bytes on Linux, 103 on the BSDs).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// New returns the Host of opts after preparing RuntimeDir; it does not
// touch the network (Check, Start and Exec connect).
func New(opts Options) (*Host, error) {
	if err := hub.CheckHostName(opts.Name); err != nil {
		return nil, err
	}
	if err := hub.CheckDestination(opts.Destination); err != nil {
		return nil, err
	}
	if opts.RuntimeDir == "" {
		return nil, errors.New("ssh host: no runtime directory")
	}
	dir, err := filepath.Abs(opts.RuntimeDir)
	if err != nil {
		return nil, fmt.Errorf("ssh host: runtime directory: %w", err)
	}
	if strings.ContainsAny(dir, ":\n") {
		return nil, fmt.Errorf("ssh host: runtime directory %s holds ':' or a line break, which ssh's forwards cannot name", dir)
	}
	if n := len(dir) + 1 + hashLen + 1 + len(credenv.LongestSocketName); n > maxSocketPath {
		return nil, fmt.Errorf("ssh host: runtime directory %s is too long for Unix sockets "+
			"(%d bytes of at most %d); choose a shorter state directory", dir, n, maxSocketPath)
	}
	if err := childrun.PrivateDir(dir); err != nil {
		return nil, fmt.Errorf("ssh host: %w", err)
	}
	opts.RuntimeDir = dir
	if len(opts.SSH) == 0 {
		opts.SSH = []string{"ssh"}
	} else {
		opts.SSH = slices.Clone(opts.SSH)
	}
	if opts.Binary == "" {
		if opts.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("ssh host: own executable: %w", err)
		}
	}
	if opts.RemoteRoot == "" {
		opts.RemoteRoot = DefaultRemoteRoot
	}
	if strings.ContainsAny(opts.RemoteRoot, ":\n\x00") {
		return nil, fmt.Errorf("ssh host: remote root %q holds ':' or a control character", opts.RemoteRoot)
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	switch {
	case opts.DetachGrace == 0:
		opts.DetachGrace = DefaultDetachGrace
	case opts.DetachGrace < 0:
		opts.DetachGrace = 0
	}
	keep := credenv.InheritedNames()
	for _, n := range opts.KeepEnv {
		if !envName.MatchString(n) {
			return nil, fmt.Errorf("ssh host: %q is not a variable's name", n)
		}
		keep = append(keep, n)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctl := filepath.Join(dir, "cm-"+shortHash(opts.Name))
	return &Host{keepEnv: strings.Join(keep, " "), starting: make(chan struct{}, maxStarting),
		opts: opts, log: log.With("backend", "ssh:"+opts.Name),
		ctlPath: ctl, masters: []*master{{ctl: ctl}},
		goos: runtime.GOOS, goarch: runtime.GOARCH,
		sessions: map[string]string{}, lingering: map[string]bool{},
	}, nil
}

// envName is what a variable's name may be, in the start script's shell.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shortHash is hashLen hex digits of the SHA-256 of s: short, and free of
// any character s may hold.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// Name reports "ssh:" and the host's name.
func (h *Host) Name() string { return "ssh:" + h.opts.Name }

// Check reaches the host now, connecting when not connected, and confirms
// that sessions can run there: the same operating system and architecture
// as the Hub. Its failures are Unavailable, with a public message in the
// user's terms (an unknown or changed host key, a refused login, an
// unreachable host, another system).
func (h *Host) Check(ctx context.Context) error {
	_, err := h.connect(ctx)
	return err
}

// Close ends the master; sessions still running on the host end with it
// (their channels close, so their stdin ends). Calls after Close fail.
func (h *Host) Close() error {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.conn = nil
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	if err := h.exitMasters(ctx); err != nil {
		return hub.Wrap(hub.Internal, err, "the connection to the host could not be closed")
	}
	return nil
}

// errClosed is the error of calls after Close.
var errClosed = hub.Errorf(hub.Unavailable, "the host's connection is closed")

// connect makes sure the master runs, the host is what the Hub can run
// on, and returns what is known of it. A master that died (a partition,
// the host rebooted) is started again.
func (h *Host) connect(ctx context.Context) (*remote, error) {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	if h.conn != nil && h.masterUp(ctx) {
		return h.conn, nil
	}
	h.conn = nil
	if !h.masterUp(ctx) {
		var stderr boundedBuffer
		cmd := h.masterCommand(ctx, h.ctlPath)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return nil, h.late(ctx)
			}
			err := h.connectFailure(err, stderr.String())
			h.log.Warn("the host could not be reached", "err", err)
			return nil, err
		}
		h.interactive(ctx, h.ctlPath)
	}
	r, err := h.probe(ctx)
	if err != nil {
		return nil, err
	}
	h.conn = r
	return r, nil
}

// late is the error of a connection not made within ctx.
func (h *Host) late(ctx context.Context) error {
	return hub.Wrap(hub.Unavailable, ctx.Err(), fmt.Sprintf("host %s: the connection was not made in time", h.opts.Name))
}

// interactive makes the master's connection send at once: the first
// session of an SSH connection decides, on both ends, whether it is
// interactive, and only an interactive one turns Nagle's algorithm off
// (TCP_NODELAY). A connection that carries forwarded sockets and
// commands without a terminal would otherwise hold each small write
// (an event of a feed, a request) until the previous one is acknowledged,
// up to a delayed acknowledgement's 40 ms. So the first session asks for
// a terminal and runs `true`. A failure is only logged: the connection
// still works, more slowly.
func (h *Host) interactive(ctx context.Context, ctl string) {
	argv := append(h.sshPrefixOn(ctl), "-o", "ControlMaster=no", "-tt", "--", h.opts.Destination, "true")
	cmd := h.command(ctx, argv)
	if out, err := cmd.CombinedOutput(); err != nil {
		h.log.Warn("the host's connection could not be made interactive", "err", err, "output", printable(string(out)))
	}
}
