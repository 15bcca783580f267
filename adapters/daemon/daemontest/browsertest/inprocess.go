package browsertest

import (
	"context"
	"net"
	"os"
	"path/filepath"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// InProcess is a Hub served by this process (daemon.Open) over the real
// adapters, except the workspace backend, which is fakes.Backend unless
// WithSessions says otherwise: its workspaces "run" without processes
// and report whatever activity the caller sets. The page cannot tell: it
// sees the same API and stream.
type InProcess struct {
	*Hub
	// Backend is the fake backend; nil WithSessions.
	Backend *fakes.Backend
	close   func()
}

// Option changes the Hub StartInProcess serves.
type Option func(*inProcessConfig)

type inProcessConfig struct {
	logins   hub.AgentLogins
	pusher   hub.Pusher
	sessions []string            // WithSessions' command; nil: the fake backend
	agents   map[string][]string // WithSessions' agents
	hosts    hub.HostConnector   // WithHosts'
}

// WithHosts gives the Hub hosts as its connector to other machines (such
// as fakes.NewHosts, whose machines live in memory).
func WithHosts(hosts hub.HostConnector) Option {
	return func(c *inProcessConfig) { c.hosts = hosts }
}

// WithAgentLogins gives the Hub these agent logins (such as
// fakes.NewAgentLogins of some fakes.FakeAgents) instead of the drivers
// of the real agents of this machine.
func WithAgentLogins(l hub.AgentLogins) Option {
	return func(c *inProcessConfig) { c.logins = l }
}

// WithPusher gives the Hub pusher as its Pusher (a test's recording
// one, say) instead of the daemon's, whose push services are out of a
// test's reach.
func WithPusher(pusher hub.Pusher) Option {
	return func(c *inProcessConfig) { c.pusher = pusher }
}

// WithSessions runs real workspace sessions instead of the fake
// backend's: each a child `command session …` (command is a built
// wharf, see Build), with agents as their coding agents by id (see
// AgentFlag's list) and, for environment, the test's scrubbed of the
// user's own with HOME the Hub's home folder (dir/home).
func WithSessions(command []string, agents map[string][]string) Option {
	return func(c *inProcessConfig) { c.sessions, c.agents = command, agents }
}

// StartInProcess serves a Hub with its state under dir on 127.0.0.1 and
// creates its first user, "ann".
func StartInProcess(ctx context.Context, dir string, opts ...Option) (*InProcess, error) {
	var cfg inProcessConfig
	for _, o := range opts {
		o(&cfg)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		return nil, err
	}
	var backend *fakes.Backend
	var sessions hub.Backend
	if cfg.sessions != nil {
		home := filepath.Join(dir, "home")
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		b, err := local.New(local.Options{RuntimeDir: filepath.Join(state, "sessions"), DataDir: filepath.Join(state, "workspaces"),
			Command: cfg.sessions, AgentCommands: cfg.agents, Env: daemontest.Environ(home, daemontest.FirstUser)})
		if err != nil {
			return nil, err
		}
		sessions = b
	} else {
		backend = fakes.NewBackend()
		sessions = backend
	}
	d, err := daemon.Open(ctx, daemon.Config{StateDir: state, Adapt: func(p *service.Ports) {
		p.Backend = sessions
		if cfg.logins != nil {
			p.AgentLogins = cfg.logins
		}
		if cfg.pusher != nil {
			p.Pusher = cfg.pusher
		}
		if cfg.hosts != nil {
			p.Hosts = cfg.hosts
		}
	}})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.Close()
		return nil, err
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(sctx, ln, nil) }()
	closeAll := func() { stop(); <-served; d.Close() }
	password, _, err := d.Hub().EnsureFirstUser(ctx, daemontest.FirstUser)
	if err != nil {
		closeAll()
		return nil, err
	}
	h := &Hub{URL: "http://" + ln.Addr().String() + "/", User: daemontest.FirstUser, Password: password, StateDir: state}
	return &InProcess{Hub: h, Backend: backend, close: closeAll}, nil
}

// Close shuts the Hub down.
func (p *InProcess) Close() { p.close() }
