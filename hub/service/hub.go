// Package service is the Hub service: the one thing that runs the rules of
// the Hub Service Interface over the ports of package hub.
//
// New builds a Hub from a Config and the Ports (every one required). The
// Hub holds the registry of workspaces and their sessions' lifecycle, the
// folder operations and their recovery journals, logins and device
// sessions (authenticated from memory) and personal state, and it runs the
// live stream's broker (hub/live), which reaches it only through
// live.Host (livehost.go). Every change of the store goes through one
// commit path (commit.go): the transaction, then, once it has committed,
// what it means for memory and for the live stream. Time enters only
// through hub.Clock, so tests drive the same Hub with the fakes and move
// time by hand.
//
// Like package hub it is pure: it never imports net/http, os/exec,
// database/sql or a driver (a test enforces it). The daemon
// (adapters/daemon), an embedding program (examples/embed) and the tests
// build it the same way.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
	"github.com/wharfhub/wharf/hub/credential"
	"github.com/wharfhub/wharf/hub/internal/keylock"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/notify"
)

// The contract revisions this core implements.
const (
	HubAPIRevision       = 11
	WorkspaceAPIRevision = 24
)

// Config tunes a Hub. The zero value is ready to use.
type Config struct {
	// Version is the product version reported in Hub state; default "devel".
	Version string
	// DeviceSessionLifetime is the absolute lifetime of a device session; it never
	// slides. Default 30 days.
	DeviceSessionLifetime time.Duration
	// Password sets the cost of new password hashes; default
	// DefaultPasswordParams.
	Password PasswordParams
	// LoginLimits bounds failed logins (see LoginLimits for the defaults).
	LoginLimits LoginLimits
	// LiveLimits bounds the live stream (see LiveLimits for the defaults).
	LiveLimits live.Limits
	// KDFConcurrency bounds concurrent password hashing; default the number
	// of CPUs.
	KDFConcurrency int
	// Logger receives the core's own logs; default discards them.
	Logger *slog.Logger
	// FactsTTL bounds how stale the facts the Hub state shows may be (a
	// workspace's Git branch, a running session's shells, whether the
	// default parent still exists): they are refreshed in the background
	// once it has passed. Default 2 s.
	FactsTTL time.Duration
	// FactsTimeout bounds how long the state waits for one workspace's
	// facts before showing it without them. Default 2 s.
	FactsTimeout time.Duration
	// IdleStop, when positive, stops a running workspace session that
	// has been idle that long (idlestop.go says what idle is); at least
	// MinIdleStop. Zero, the default, never stops one.
	IdleStop time.Duration
	// PushHosts adds hosts (with their port, if any) that a push
	// subscription's endpoint may name besides the real push services':
	// a private push service, or a test's.
	PushHosts []string
}

// Ports are the adapters a Hub needs. Every field but Hosts is required.
type Ports struct {
	Store   hub.Store
	Clock   hub.Clock
	FS      hub.FS
	Git     hub.GitRunner
	Backend hub.Backend
	// Vault holds the credentials' secrets; Tools finds the tools they
	// rely on.
	Vault hub.KeyVault
	Tools hub.ToolProber
	// AgentLogins reaches the agents' own login interfaces on the Hub
	// machine (the agent-accounts family).
	AgentLogins hub.AgentLogins
	// Pusher delivers Web Push notifications (the notifications family).
	Pusher hub.Pusher
	// Hosts reaches the other machines workspaces may live on (places.go).
	// It is the one optional port: without it the Hub runs workspaces on
	// its own machine only, and adding a host is refused.
	Hosts hub.HostConnector
}

// Hub is the Hub service. Its methods are safe for concurrent use.
type Hub struct {
	cfg   Config
	store hub.Store
	clock hub.Clock
	fs    hub.FS
	log   *slog.Logger

	kdf       chan struct{} // semaphore bounding password hashing
	dummyHash string        // verified for unknown names, at the cost of a real hash
	loginGate loginGate     // the login limits and the device token key
	verified  atomic.Uint64 // password verifications performed
	counters  counters      // what Stats reports (stats.go)
	ready     readiness     // what Ready keeps (ready.go)

	git     hub.GitRunner
	backend hub.Backend
	here    place      // the Hub's own machine: fs, git and backend above
	hosts   hostPlaces // the other machines (places.go)
	vault   hub.KeyVault
	tools   hub.ToolProber

	cred       credentialCache       // the catalog, kept by the commit path
	credLocks  keylock.Locks         // one per credential: what changes its secret in the vault
	credLimits *credential.Limits    // the generate and passphrase budgets
	toolPaths  toolPaths             // where each tool was last found
	grants     sessionGrants         // what each running session was lent
	uses       useGate               // held uses and the use logs
	clones     cloneJobs             // the clone jobs, running and retained
	accounts   *agentaccount.Manager // the agents' login runtimes and attempts
	push       *pushEngine           // the push notifications (notify.go)
	idle       *idleStopper          // stops idle sessions (idlestop.go)
	attach     attachments           // the terminals attached to running sessions (attachments.go)

	// Lock order: folderMu or onboardMu, then workspace locks (sorted by
	// id), then credential locks (sorted by id), then commitMu, then st.mu or auth.mu, then mu. The live
	// broker's lock is never held while commitMu is taken (it calls
	// live.Host with its lock held only for what takes st.mu or mu); its
	// marks lock and device authentication's reloadMu are taken before
	// commitMu (both write through the commit path). Each workspace
	// lock serializes that workspace's lifecycle: start, stop, forget,
	// renames, display-name changes and idle stops. The idle stopper's
	// lock is innermost but for the clock's: the broker's hooks and the
	// commit path's changes take it, and it holds nothing else.
	folderMu  sync.Mutex // serializes folder mutations
	onboardMu sync.Mutex // serializes registrations, so minted ids cannot race
	wsLocks   keylock.Locks
	reserved  reservations
	live      *live.Broker

	// The worktree family (worktrees.go): operations of one repository
	// run one at a time, by repository id.
	wtLocks keylock.Locks
	wt      wtFacts
	wtPend  wtPending // creates whose trees wait to be registered

	// commitMu serializes commits and settlements (commit.go), so their
	// consequences reach memory in the order they happened.
	commitMu sync.Mutex
	st       hubState   // the registry, the facts and the state snapshot
	auth     deviceAuth // the active device sessions, by digest

	// bg is the context of the Hub's own background work (facts
	// refreshes; the live broker has its own); Close cancels it with
	// stopBG.
	bg     context.Context
	stopBG context.CancelFunc

	mu       sync.Mutex
	running  map[string]*runningWorkspace // by workspace id
	ended    map[string]string            // why a session ended on its own, by workspace id, until the next start
	stranded map[int64]hub.JournalKind    // journals left pending; they fence changes until recovery
	awaiting map[int64]hub.JournalKind    // folder journals of hosts, pending until resumeHost settles them; they fence too
	closed   bool
	watchers sync.WaitGroup // session watchers, waited for by Close
}

// New returns a Hub over the given ports. A missing port is an error. The
// caller closes the Hub and then, separately, its ports.
func New(cfg Config, p Ports) (*Hub, error) {
	if p.Store == nil || p.Clock == nil || p.FS == nil || p.Git == nil || p.Backend == nil || p.Vault == nil || p.Tools == nil || p.AgentLogins == nil || p.Pusher == nil {
		return nil, errors.New("service.New: every field of Ports is required")
	}
	if cfg.IdleStop < 0 || cfg.IdleStop > 0 && cfg.IdleStop < MinIdleStop {
		return nil, fmt.Errorf("service.New: IdleStop must be 0 (off) or at least %v", MinIdleStop)
	}
	cfg = withDefaults(cfg)
	h := &Hub{
		cfg:        cfg,
		store:      p.Store,
		clock:      p.Clock,
		fs:         p.FS,
		git:        p.Git,
		backend:    p.Backend,
		here:       place{name: hub.LocalBackend, backend: p.Backend, fs: p.FS, git: p.Git},
		hosts:      hostPlaces{connector: p.Hosts},
		vault:      p.Vault,
		tools:      p.Tools,
		credLimits: credential.NewLimits(),
		running:    map[string]*runningWorkspace{},
		ended:      map[string]string{},
		stranded:   map[int64]hub.JournalKind{},
		awaiting:   map[int64]hub.JournalKind{},
		log:        cfg.Logger,
		kdf:        make(chan struct{}, cfg.KDFConcurrency),
		loginGate:  newLoginGate(cfg.LoginLimits),
	}
	h.bg, h.stopBG = context.WithCancel(context.Background())
	h.push = newPushEngine(h, p.Pusher, notify.Allowlist{Extra: cfg.PushHosts})
	h.idle = newIdleStopper(h, cfg.IdleStop)
	h.live = live.New(live.Config{Clock: p.Clock, Logger: cfg.Logger, Limits: cfg.LiveLimits,
		Presence: func(user, ws string, open bool) {
			h.push.presenceChanged(user, ws, open)
			h.idle.streamChanged(ws, open)
		},
		Observed: h.idle.observed, ShellsMoved: h.st.shellsMoved}, liveHost{h})
	h.st.h = h
	h.auth.h = h
	var err error
	if h.dummyHash, err = unmatchableHash(cfg.Password); err != nil {
		return nil, err
	}
	if h.accounts, err = newAgentAccounts(h, p.AgentLogins); err != nil {
		return nil, err
	}
	return h, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Version == "" {
		cfg.Version = "devel"
	}
	if cfg.DeviceSessionLifetime <= 0 {
		cfg.DeviceSessionLifetime = 30 * 24 * time.Hour
	}
	if cfg.Password == (PasswordParams{}) {
		cfg.Password = DefaultPasswordParams
	}
	cfg.LoginLimits = cfg.LoginLimits.withDefaults()
	if cfg.KDFConcurrency <= 0 {
		cfg.KDFConcurrency = runtime.NumCPU()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.FactsTTL <= 0 {
		cfg.FactsTTL = 2 * time.Second
	}
	if cfg.FactsTimeout <= 0 {
		cfg.FactsTimeout = 2 * time.Second
	}
	return cfg
}

// Clock returns the Hub's clock, so adapters that need time (cookie expiry,
// keepalives) read the same time as the core.
func (h *Hub) Clock() hub.Clock { return h.clock }

// PasswordVerifications reports how many password verifications the Hub
// has performed since it started; operators and the login-abuse benchmark
// read it to see how much work the limiter let through.
func (h *Hub) PasswordVerifications() uint64 { return h.verified.Load() }

// DeviceSessionLifetime reports the absolute lifetime of new device sessions.
func (h *Hub) DeviceSessionLifetime() time.Duration { return h.cfg.DeviceSessionLifetime }
