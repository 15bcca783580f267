package codex

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// Options configure the driver.
type Options struct {
	// Command is the program and its leading arguments; default
	// {"codex"}. The driver adds "app-server".
	Command []string
	// Env is the runtime's whole environment (HOME, PATH, CODEX_HOME, …):
	// the login lands in the store it locates ($CODEX_HOME/auth.json,
	// default ~/.codex).
	Env []string
	// Logger gets diagnostics: method names, error codes, counts; never a
	// key, code, address, token or codex's own output.
	Logger *slog.Logger
}

// The agent's identity.
const (
	agentID      = "codex"
	agentName    = "Codex"
	loginCommand = "codex login"
)

// New returns the Codex driver.
func New(opts Options) hub.AgentLoginDriver {
	if len(opts.Command) == 0 {
		opts.Command = []string{"codex"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Command = append([]string(nil), opts.Command...)
	opts.Env = append([]string(nil), opts.Env...)
	return &codexDriver{opts: opts}
}

type codexDriver struct{ opts Options }

func (d *codexDriver) Agent() hub.AgentLoginAgent {
	return hub.AgentLoginAgent{ID: agentID, Name: agentName, Command: d.opts.Command[0], LoginCommand: loginCommand}
}

// Start starts `codex app-server` and returns once it answered
// initialize (within ctx and CallTimeout).
func (d *codexDriver) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	path, err := driver.LookPath(agentName, d.opts.Command[0], d.opts.Env)
	if err != nil {
		return nil, err
	}
	log := d.opts.Logger.With("agent", agentID)
	r := &runtime{log: log, flows: map[string]*flow{}}
	args := append(append([]string(nil), d.opts.Command[1:]...), "app-server")
	c, err := startConn(path, args, d.opts.Env, log, r.onNotification, r.onEnd)
	if err != nil {
		return nil, err
	}
	r.c = c
	if err := r.initialize(ctx); err != nil {
		c.close()
		return nil, err
	}
	return r, nil
}

// runtime is one started app-server.
type runtime struct {
	c       *conn
	log     *slog.Logger
	version string

	mu    sync.Mutex
	flows map[string]*flow // pending logins by codex's login id
	// early holds the outcomes of logins whose completion came before
	// their start's answer was handled (a few, the oldest dropped).
	early   []earlyOutcome
	ended   bool
	closing bool // Close began: no more background work

	bg sync.WaitGroup // cancels sent in the background, added under mu while !closing
}

type earlyOutcome struct {
	loginID string
	success bool
}

// maxEarly bounds the outcomes kept for logins not yet registered.
const maxEarly = 8

// initialize is codex's handshake: initialize (naming this client, which
// codex uses as its originator and user agent), then initialized.
func (r *runtime) initialize(ctx context.Context) error {
	raw, err := r.c.call(ctx, "initialize", map[string]any{
		"clientInfo": map[string]string{"name": "wharf", "title": "Wharf", "version": "1"},
	})
	if errors.Is(err, errStopped) {
		return &hub.Error{Kind: hub.Unavailable, Message: "Codex exited before its login interface answered. Run `" +
			loginCommand + "` on the Hub machine to see why."}
	}
	if err != nil {
		return r.unavailable(err, "initialize", "Codex did not start its login interface.")
	}
	var res struct {
		UserAgent string `json:"userAgent"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return &hub.Error{Kind: hub.Unavailable, Message: "Codex answered in a way Wharf does not understand."}
	}
	r.version = versionOf(res.UserAgent)
	return r.c.notifyCodex(ctx, "initialized")
}

// unavailable is err as the agent being unreachable, with message when
// codex answered with an error (whose text is never kept).
func (r *runtime) unavailable(err error, method, message string) error {
	var f *rpcFailure
	if errors.As(err, &f) {
		r.log.Warn("codex refused a call", "method", method, "code", f.Code)
		return &hub.Error{Kind: hub.Unavailable, Message: message, Err: f}
	}
	return err
}

// onNotification handles codex's notifications, on the reader goroutine.
// Only a login's completion matters here; account/updated and the rest
// are codex telling its UI about things this client reads on demand.
func (r *runtime) onNotification(method string, params json.RawMessage) {
	if method != "account/login/completed" {
		return
	}
	done, err := parseCompleted(params)
	if err != nil {
		r.log.Warn("codex sent a login completion Wharf does not understand")
		return
	}
	if done.LoginID == "" {
		return // a key login's, which its call's answer already settled
	}
	r.mu.Lock()
	f := r.flows[done.LoginID]
	if f == nil {
		r.early = append(r.early, earlyOutcome{done.LoginID, done.Success})
		if len(r.early) > maxEarly {
			r.early = r.early[1:]
		}
	}
	delete(r.flows, done.LoginID)
	r.mu.Unlock()
	if f != nil {
		f.complete(done.Success)
	}
}

// register records f as pending, or settles it at once when its outcome
// already came, or codex already stopped.
func (r *runtime) register(f *flow) {
	r.mu.Lock()
	for i, e := range r.early {
		if e.loginID == f.loginID {
			r.early = append(r.early[:i], r.early[i+1:]...)
			r.mu.Unlock()
			f.complete(e.success)
			return
		}
	}
	if r.ended {
		r.mu.Unlock()
		f.settle.Finish(errFlowStopped)
		return
	}
	r.flows[f.loginID] = f
	r.mu.Unlock()
}

// forget drops f from the pending logins.
func (r *runtime) forget(f *flow) {
	r.mu.Lock()
	if r.flows[f.loginID] == f {
		delete(r.flows, f.loginID)
	}
	r.mu.Unlock()
}

// onEnd settles the pending logins once codex is gone.
func (r *runtime) onEnd() {
	r.mu.Lock()
	r.ended = true
	flows := r.flows
	r.flows = map[string]*flow{}
	r.mu.Unlock()
	for _, f := range flows {
		f.settle.Finish(errFlowStopped)
	}
}

func (r *runtime) Done() <-chan struct{} { return r.c.done }

// Close stops codex (and with it every login's listener) and returns once
// its process group is gone and the cancels it started have ended.
func (r *runtime) Close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.c.close()
	r.bg.Wait()
}

// pid is codex's process id (its group's), for tests.
func (r *runtime) pid() int { return r.c.cmd.Process.Pid }
