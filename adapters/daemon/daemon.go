// Package daemon is the one assembly of Wharf: it builds a running Hub from
// a Config and a private state directory with the real adapters (SQLite,
// the host file system, os/exec git, workspace sessions as local child
// processes) and serves it over HTTP under the daemon's bounds.
//
// It is the only package that imports the other adapters. The wharf
// command, the embedding example and the load benchmark all call Open, so
// a new port is wired here once. An embedder swaps one adapter with
// Config.Adapt, for instance:
//
//	daemon.Config{StateDir: dir, Adapt: func(p *service.Ports) { p.Git = myGit{p.Git} }}
//
// Tests of the core build service.New over the fakes instead.
package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount"
	"github.com/wharfhub/wharf/adapters/credtools"
	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/adapters/metrics"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/adapters/statedir"
	"github.com/wharfhub/wharf/adapters/web"
	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// Config says how to build a Hub on this host. StateDir is required; every
// other field has a working zero value.
type Config struct {
	// StateDir is the private state directory (mode 0700; created when
	// missing, refused when group or others may read it). It holds the
	// database (wharf.db), the lock, the workspace sessions' sockets and
	// each workspace's private data (workspaces/<hash>: its conversation
	// inventory).
	StateDir string
	// Hub tunes the core. Its Logger defaults to Logger.
	Hub service.Config
	// Logger receives the daemon's logs; default discards them. Warnings
	// of one kind are let through at most five a minute, the next one
	// saying how many were dropped.
	Logger *slog.Logger
	// SessionCommand starts a workspace session child; the session
	// arguments follow it. Default: this program (os.Executable()), which
	// must then call RunChild for `session` arguments (cmd/wharf and
	// examples/embed do).
	SessionCommand []string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (httpapi.Options.TrustedProxies): the login limits count
	// the forwarded client, and a proxy's connections are capped only in
	// total, its clients' requests per forwarded client (requests.go).
	TrustedProxies []netip.Prefix
	// PublicURL, when set, is the address people type to reach the Hub
	// through a reverse proxy, https://hub.example.ts.net (ParsePublicURL
	// checks one): its host is allowed, and a request naming it gets its
	// scheme's cookies, HSTS and same-origin rule
	// (httpapi.Options.PublicURL). The proxy's own address belongs in
	// TrustedProxies; wharf serve --public-url puts loopback there when it
	// listens on loopback, where only local processes can connect.
	PublicURL *url.URL
	// TLS, when set, is the configuration of the listener Serve is given
	// (Serve wraps it); nil serves plain HTTP, unless ACME is set.
	TLS *tls.Config
	// ACME, when its Domain is set, has Serve present a certificate for
	// that name obtained and renewed from an ACME certificate authority,
	// cached in the state directory's acme/ (acme.go). It excludes TLS.
	ACME ACME
	// PublicHosts are the host names clients reach the Hub by, besides
	// IP addresses and localhost (a name behind a reverse proxy, the
	// listen address's name). The DNS names of the TLS certificate and
	// the ACME domain are added. A request naming any other host answers 421, which keeps
	// pages on other names that resolve to the Hub (DNS rebinding) out.
	PublicHosts []string
	// AgentCommands sets the command of a coding agent by id, in every
	// workspace session (a known agent's, or a new agent's).
	AgentCommands map[string][]string
	// CloneCAFile, when set, is a PEM file of the certificate
	// authorities HTTPS clones trust instead of the system's: a Git host
	// with a private CA. (A clone reads no system or user git config,
	// where http.sslCAInfo would otherwise come from.)
	CloneCAFile string
	// PushContact is the operator's address (mailto: or https:) that
	// push services may write to; it turns Web Push on. Empty leaves push
	// off (the notification operations say so); one push services reject
	// (a localhost mail address) fails Open.
	PushContact string
	// PushCAFile, when set, is a PEM file of the certificate authorities
	// push services are trusted with instead of the system's: a private
	// push service (or a test's).
	PushCAFile string
	// SSH is the ssh command (and options of its own) that reaches the
	// configured hosts, whose workspaces live on other machines; nil is
	// "ssh" from PATH, with the Hub user's own configuration. `wharf
	// serve --ssh-config FILE` gives ["ssh", "-F", FILE].
	SSH []string
	// Adapt, when set, may replace or wrap any of the real ports before the
	// Hub is built: the one place an embedder swaps an adapter.
	Adapt func(*service.Ports)
	// Admin opens the state for administration beside a daemon that may
	// be running (wharf user): the directory is not locked, no journal is
	// recovered and no workspace is started.
	Admin bool
	// MaxConns and MaxConnsPerClient cap the connections Serve holds at
	// once, in total and per client address (an IPv6 /64; trusted
	// proxies are capped only in total). Zero picks DefaultMaxConns (or
	// half the process's descriptor limit, when that is lower) and
	// DefaultMaxConnsPerClient.
	MaxConns, MaxConnsPerClient int
	// ReadTimeout bounds reading one request, headers and body; zero
	// picks DefaultReadTimeout. A handler that takes a larger body moves
	// its own deadline (http.ResponseController.SetReadDeadline).
	ReadTimeout time.Duration
	// Metrics turns the Prometheus metrics on (metrics.go): requests by
	// route, the store's transactions and the Hub's snapshot, served by
	// ServeMetrics. Off, nothing is counted but the Hub's own counters.
	Metrics bool
}

// Bounds of every request the server reads. The live stream's long
// writes are not bounded here: its writer sets a deadline per write.
const (
	// DefaultReadTimeout bounds reading a request, headers and body: a
	// client sending a byte at a time is cut off.
	DefaultReadTimeout = 30 * time.Second
	// readHeaderTimeout bounds the headers alone.
	readHeaderTimeout = 10 * time.Second
	// maxHeaderBytes bounds a request's headers.
	maxHeaderBytes = 64 << 10
)

// Daemon is a running Hub with the adapters it was built over. Close it
// once done.
type Daemon struct {
	cfg   Config
	log   *slog.Logger
	dir   *statedir.Dir
	store *sqlite.Store
	git   *gitexec.Runner
	// removeHostsDir removes an administration command's own hosts
	// runtime folder at Close; nil for the daemon.
	removeHostsDir func()
	hub            *service.Hub
	handler        http.Handler
	metrics        *metrics.Metrics // nil unless Config.Metrics
	tls            *tls.Config      // the listener's: Config.TLS, or the ACME one
	acme           *acmeCerts       // nil without Config.ACME
}

// Open builds the Hub over the real adapters in cfg.StateDir, recovers
// what a previous run left pending and starts the workspaces that were
// running (unless cfg.Admin). A second daemon on the same state directory
// fails with an error wrapping statedir.ErrLocked.
func Open(ctx context.Context, cfg Config) (_ *Daemon, err error) {
	if cfg.StateDir == "" {
		return nil, errors.New("daemon: no state directory")
	}
	if cfg.PublicURL != nil {
		if err := checkPublicURL(cfg.PublicURL); err != nil {
			return nil, fmt.Errorf("daemon: public URL %w", err)
		}
	}
	d := &Daemon{cfg: cfg, log: slog.New(slog.DiscardHandler)}
	if cfg.Logger != nil {
		// Repeated warnings that clients can cause are throttled, so
		// nobody floods the operator's log (logthrottle.go).
		// Failures that are a client's leaving are no warnings (cancel.go).
		d.log = slog.New(demoteCancelled{newThrottle(cfg.Logger.Handler(), time.Now)})
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if cfg.ACME.Domain != "" && cfg.TLS != nil {
		return nil, errors.New("daemon: TLS and ACME exclude each other")
	}
	if d.dir, err = statedir.Open(cfg.StateDir); err != nil {
		return nil, err
	}
	if !cfg.Admin {
		if err := d.dir.Lock(); err != nil {
			return nil, err
		}
	}
	d.tls = cfg.TLS
	allowed := append(slices.Clone(cfg.PublicHosts), certificateNames(cfg.TLS)...)
	if cfg.ACME.Domain != "" && !cfg.Admin {
		if d.acme, err = newACME(cfg.ACME, d.dir.Path(acmeDirName), d.log); err != nil {
			return nil, err
		}
		d.tls = d.acme.tlsConfig()
		allowed = append(allowed, d.acme.domain)
	}
	if d.store, err = sqlite.Open(d.dir.Path("wharf.db")); err != nil {
		return nil, err
	}
	backend, err := local.New(local.Options{RuntimeDir: d.dir.Path("sessions"), Command: cfg.SessionCommand, Logger: d.log,
		DataDir: d.dir.Path("workspaces"), AgentCommands: cfg.AgentCommands})
	if err != nil {
		return nil, err
	}
	// A clone's git runs `wharf git-credential` as its session would,
	// from a private folder of its own in the state directory.
	d.git = gitexec.New(gitexec.Options{Logger: d.log, RuntimeDir: d.dir.Path("clones"), Command: cfg.SessionCommand,
		CloneCAFile: cfg.CloneCAFile})
	// The vault's Hub key lives beside the database and never in it, so
	// a copy of the database alone opens no token and no unprotected key.
	vault, err := keyvault.New(keyvault.Options{KeyFile: d.dir.Path("hub.key")})
	if err != nil {
		return nil, err
	}
	tools := credtools.New(credtools.Options{Path: os.Getenv("PATH")})
	// The agents' login runtimes get the environment a session's agents
	// get, so a login lands where those agents look for it.
	logins := agentaccount.New(agentaccount.Options{Env: credenv.AgentEnv(os.Environ()), Custom: cfg.AgentCommands, Logger: d.log})
	pushClient, err := caClient(cfg.PushCAFile)
	if err != nil {
		return nil, fmt.Errorf("push CA file: %w", err)
	}
	// The VAPID key lives beside the database, like the vault's key: push
	// services know the Hub by it, so it never changes once made.
	pusher, err := webpush.New(webpush.Options{KeyFile: d.dir.Path("push.key"), Contact: cfg.PushContact, Client: pushClient, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("web push: %w", err)
	}
	hostsDir, removeHostsDir, err := hostsRuntimeDir(d.dir.Path("hosts"), cfg.Admin)
	if err != nil {
		return nil, err
	}
	d.removeHostsDir = removeHostsDir
	ports := service.Ports{Store: d.store, Clock: hub.SystemClock{}, FS: osfs.FS{}, Git: d.git, Backend: backend, Vault: vault, Tools: tools,
		AgentLogins: logins, Pusher: pusher,
		Hosts: &hostConnector{runtimeDir: hostsDir, ssh: cfg.SSH, agents: cfg.AgentCommands, log: d.log}}
	if cfg.Adapt != nil {
		cfg.Adapt(&ports)
	}
	if cfg.Metrics {
		// Around whatever store Adapt left: the one the Hub uses.
		d.metrics = metrics.New()
		ports.Store = d.metrics.Store(ports.Store)
	}
	hcfg := cfg.Hub
	if hcfg.Logger == nil {
		hcfg.Logger = d.log
	}
	if d.hub, err = service.New(hcfg, ports); err != nil {
		return nil, err
	}
	if !cfg.Admin {
		if err := d.hub.Recover(ctx); err != nil {
			return nil, fmt.Errorf("recovery: %w", err)
		}
		if n := d.hub.PendingJournals() - d.hub.AwaitingHosts(); n > 0 {
			d.log.Error("recovery left journals pending: folder and workspace changes are refused until they are settled (see the errors above)", "journals", n)
		}
	}
	// The browser dashboard is a client of the API like any other; it
	// gets the GET and HEAD requests outside /api/ and /s/.
	opts := httpapi.Options{Logger: d.log, TrustedProxies: cfg.TrustedProxies,
		AllowedHosts: allowed,
		PublicURL:    cfg.PublicURL,
		Pages:        web.NewHandler()}
	if d.metrics != nil {
		d.metrics.Observe(d.hub)
		opts.Requests = d.metrics
	}
	d.handler = httpapi.NewHandler(httpapi.ServicesOf(d.hub), opts)
	return d, nil
}

// certificateNames returns the DNS names of c's certificates.
func certificateNames(c *tls.Config) []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, cert := range c.Certificates {
		leaf := cert.Leaf
		if leaf == nil && len(cert.Certificate) > 0 {
			leaf, _ = x509.ParseCertificate(cert.Certificate[0])
		}
		if leaf != nil {
			names = append(names, leaf.DNSNames...)
		}
	}
	return names
}

// Hub returns the running Hub.
func (d *Daemon) Hub() *service.Hub { return d.hub }

// Root returns the canonical path of the state directory.
func (d *Daemon) Root() string { return d.dir.Root() }

// Handler returns everything the daemon serves over HTTP: the Hub API
// and the browser dashboard (its pages and /assets/...). An embedder may
// mount it in its own mux (it owns its absolute paths: /, /login, /logout,
// /add, /settings, /w/..., /assets/..., /api/..., /s/...) and pass that
// mux to Serve.
func (d *Daemon) Handler() http.Handler { return d.handler }

// Serve serves h (nil: Handler) on ln, wrapped in TLS when Config.TLS or
// Config.ACME is set, until ctx ends or serving fails. With ACME it asks
// for the certificate at once (from the cache, else the CA, which
// connects to ln to check the name). On ctx's end it shuts down
// gracefully: it stops accepting, ends the live streams (which would
// otherwise hold the shutdown forever) and waits a bounded time for
// requests in flight. It returns nil after a shutdown asked for by ctx.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	if h == nil {
		h = d.handler
	}
	max, perClient := d.cfg.MaxConns, d.cfg.MaxConnsPerClient
	if max <= 0 {
		max = min(DefaultMaxConns, descriptorLimit()/2)
	}
	if perClient <= 0 {
		perClient = DefaultMaxConnsPerClient
	}
	readTimeout := d.cfg.ReadTimeout
	if readTimeout <= 0 {
		readTimeout = DefaultReadTimeout
	}
	conns := newConnLimiter(max, perClient, func(a netip.Addr) bool {
		return slices.ContainsFunc(d.cfg.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(a) })
	}, d.log, time.Now)
	ln = limitedListener{Listener: ln, l: conns}
	if d.tls != nil {
		ln = tls.NewListener(ln, d.tls)
	}
	baseCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           h,
		ReadTimeout:       readTimeout,
		ReadHeaderTimeout: min(readHeaderTimeout, readTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ConnState:         conns.track,
		ErrorLog:          log.New(serverLog{d.log}, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	warm := make(chan struct{})
	if d.acme != nil {
		go func() { defer close(warm); d.acme.warmUp() }()
	} else {
		close(warm)
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	d.log.Info("shutting down")
	d.hub.Drain() // /readyz answers 503 from now on, on every listener
	endStreams()
	conns.closeQuiet()
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
	}
	<-served
	// An order in flight ends within the shutdown's bound, or is left to
	// finish on its own: autocert's requests take no context of ours.
	select {
	case <-warm:
	case <-shutCtx.Done():
	}
	return nil
}

// Close stops the workspace sessions (they keep their mark and start again
// with the next Open), removes git's temporary directories, then closes
// the database and releases the state directory.
func (d *Daemon) Close() error {
	var err error
	if d.hub != nil {
		err = d.hub.Close()
	}
	if d.git != nil {
		err = errors.Join(err, d.git.Close())
	}
	if d.removeHostsDir != nil {
		d.removeHostsDir()
	}
	if d.store != nil {
		err = errors.Join(err, d.store.Close())
	}
	if d.dir != nil {
		err = errors.Join(err, d.dir.Close())
	}
	return err
}

// caClient is an HTTP client trusting the system's certificate
// authorities, or only those of caFile when set: what Web Push sends
// with and what asks an ACME CA for certificates.
func caClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return &http.Client{}, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	return &http.Client{Transport: t}, nil
}
