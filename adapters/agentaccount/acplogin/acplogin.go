package acplogin

import (
	"context"
	"log/slog"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of the calls to the agent.
const (
	// InitializeTimeout bounds Start's `initialize`.
	InitializeTimeout = 30 * time.Second
	// LogoutTimeout bounds Logout's `logout`.
	LogoutTimeout = 15 * time.Second
)

// Options configure the driver of one custom agent.
type Options struct {
	// ID is the agent's id, as the chat API names it (`--agent ID=…`);
	// also its one target's id.
	ID string
	// Name is the agent's name for people.
	Name string
	// Command is the agent's program and its arguments, as the chat
	// runs it: the same process answers ACP's `initialize`.
	Command []string
	// Env is the runtime's whole environment (HOME, PATH, the agent's
	// variables); the program is looked for on its PATH, and its env_var
	// logins are read from it (whether set, never their values).
	Env []string
	// Logger receives diagnostics; never a value of Env or the agent's
	// output.
	Logger *slog.Logger
}

// New returns the driver of the custom agent opts describe.
func New(opts Options) hub.AgentLoginDriver {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{opts: opts}
}

// Driver reaches a custom agent's login interface: ACP's `initialize`
// and `logout`.
type Driver struct {
	opts Options

	mu       sync.Mutex
	terminal string // the last initialize's terminal command line
}

var _ hub.AgentLoginDriver = (*Driver)(nil)

// Agent implements hub.AgentLoginDriver. LoginCommand is the terminal
// method's command line the agent declared when it last started; ""
// before it started and when it declares none.
func (d *Driver) Agent() hub.AgentLoginAgent {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := hub.AgentLoginAgent{ID: d.opts.ID, Name: d.opts.Name, LoginCommand: d.terminal}
	if len(d.opts.Command) > 0 {
		a.Command = d.opts.Command[0]
	}
	return a
}

// Start implements hub.AgentLoginDriver: it starts the agent and reads
// its `initialize` answer within InitializeTimeout (and ctx).
func (d *Driver) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	name := d.opts.Name
	if len(d.opts.Command) == 0 || d.opts.Command[0] == "" {
		return nil, hub.Errorf(hub.Internal, "%s has no command to run.", name)
	}
	path, err := driver.LookPath(name, d.opts.Command[0], d.opts.Env)
	if err != nil {
		return nil, err
	}
	c, err := spawn(name, path, d.opts.Command[1:], d.opts.Env, d.opts.Logger)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, InitializeTimeout)
	defer cancel()
	res, err := c.sdk.Initialize(ictx, acpsdk.InitializeRequest{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientInfo:      &acpsdk.Implementation{Name: "wharf", Version: "1"},
		// No files, no terminals: this connection only logs in. Terminal
		// logins are declared so the agent lists them; the Hub shows them
		// as commands for a person to run.
		ClientCapabilities: acpsdk.ClientCapabilities{Auth: acpsdk.AuthCapabilities{Terminal: true}},
	})
	if err != nil {
		err = c.failure(ictx, err, "did not start its login interface")
		c.Close()
		return nil, err
	}
	l := statusOf(d.opts.ID, name, d.opts.Command, res, d.opts.Env)
	for _, why := range l.dropped {
		d.opts.Logger.Warn("a login method of the agent is not listed", "agent", d.opts.ID, "why", why)
	}
	d.mu.Lock()
	d.terminal = l.terminal
	d.mu.Unlock()
	return &runtime{c: c, id: d.opts.ID, name: name, login: l}, nil
}

// failure is the public error of a call to the agent that failed with err
// within ctx; what says, for people, what the agent did not do.
func (c *conn) failure(ctx context.Context, err error, what string) error {
	switch {
	case c.ended():
		return hub.Wrap(hub.Unavailable, err, c.name+" exited; its login interface is not available.")
	case ctx.Err() != nil:
		return hub.Wrap(hub.Unavailable, err, c.name+" did not answer in time.")
	}
	return hub.Wrap(hub.Unavailable, err, c.name+" "+what+".")
}
