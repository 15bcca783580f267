// Package claude is the agent-login driver of Claude Code, over its CLI:
// `claude auth status --json`, `claude auth login --claudeai|--console`
// and `claude auth logout` (Claude Code 2.1 and later; its CLI is a
// closed bundle, so this follows what it does, not its source).
//
// A runtime runs no server: Start finds the command and reads `claude
// --version`; every call then runs one command, bounded in time
// (CallTimeout) and in what is read (MaxOutput of standard output; the
// standard error, which can quote what Claude Code was given, is never
// read). A login runs `claude auth login` in a pseudo-terminal of its
// own: it prints a manual link whose page shows a code, and reads
// `code#state` from its terminal; the flow settles by the program's exit
// status. Its output is read for the link only (bounded, with control
// sequences removed); once the link is found nothing it prints is kept.
//
// Claude Code has one target, Anthropic's ("anthropic"), and one login
// at a time: a Claude subscription or an Anthropic Console key (both in
// its store, removable by `claude auth logout`), or what its environment
// and settings give it (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, an
// apiKeyHelper, a third-party cloud), which a logout cannot remove. A
// key typed in is refused: Claude Code reads an API key only from its
// environment.
package claude

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of the driver.
const (
	// CallTimeout bounds each command a call runs (a status, a logout,
	// the version, the help).
	CallTimeout = 15 * time.Second
	// MaxOutput bounds the standard output read from a command.
	MaxOutput = 1 << 20
)

// The agent's identity.
const (
	agentID      = "claude"
	agentName    = "Claude Code"
	loginCommand = "claude auth login"
	targetID     = "anthropic"
	targetName   = "Claude"
)

// Options configure the driver.
type Options struct {
	// Command is the program and its leading arguments; default
	// {"claude"}.
	Command []string
	// Env is the runtime's whole environment (HOME, PATH,
	// CLAUDE_CONFIG_DIR, …): the login lands in the store it locates
	// ($CLAUDE_CONFIG_DIR/.credentials.json, default
	// ~/.claude/.credentials.json).
	Env []string
	// Logger gets diagnostics: commands run and their exit statuses;
	// never a key, code, link, token or Claude Code's own output.
	Logger *slog.Logger
}

// New returns the Claude Code driver.
func New(opts Options) hub.AgentLoginDriver {
	if len(opts.Command) == 0 {
		opts.Command = []string{"claude"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Command = append([]string(nil), opts.Command...)
	opts.Env = append([]string(nil), opts.Env...)
	return &claudeDriver{opts: opts}
}

type claudeDriver struct{ opts Options }

func (d *claudeDriver) Agent() hub.AgentLoginAgent {
	return hub.AgentLoginAgent{ID: agentID, Name: agentName, Command: d.opts.Command[0], LoginCommand: loginCommand}
}

// Start finds the command and reads `claude --version` (within ctx and
// CallTimeout).
func (d *claudeDriver) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	path, err := driver.LookPath(agentName, d.opts.Command[0], d.opts.Env)
	if err != nil {
		return nil, err
	}
	r := &runtime{path: path, args: d.opts.Command[1:], env: d.opts.Env, dir: workDir(d.opts.Env),
		log: d.opts.Logger.With("agent", agentID), done: make(chan struct{})}
	out, code, err := r.run(ctx, "--version")
	if err != nil || code != 0 {
		return nil, r.unavailable(err, "Claude Code did not answer `claude --version`.")
	}
	r.version = versionOf(out)
	return r, nil
}

// workDir is where the commands run: the home folder of env when it has
// an absolute one, else the root (never the Hub's own folder, nor a
// repository).
func workDir(env []string) string {
	if h := driver.Getenv(env, "HOME"); filepath.IsAbs(h) {
		return h
	}
	return "/"
}

// runtime is a started driver: the command found, its version read.
type runtime struct {
	path    string
	args    []string // the leading arguments
	env     []string
	dir     string
	log     *slog.Logger
	version string

	helpMu sync.Mutex
	help   *authCommands // read once, by the first call that needs it

	mu     sync.Mutex
	closed bool
	done   chan struct{}  // closed by Close
	wg     sync.WaitGroup // the flows' goroutines, added under mu while !closed
}

// command is the command running the CLI with args.
func (r *runtime) command(args ...string) ptyflow.Command {
	return ptyflow.Command{Path: r.path, Args: append(append([]string(nil), r.args...), args...), Env: r.env, Dir: r.dir}
}

// run runs the CLI with args once, within ctx and CallTimeout, and
// returns its standard output and exit status.
func (r *runtime) run(ctx context.Context, args ...string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	out, code, err := ptyflow.Run(ctx, r.command(args...), MaxOutput)
	r.log.Debug("claude command", "args", args, "exit", code, "err", err)
	return out, code, err
}

// unavailable is the public error of a command that did not answer.
func (r *runtime) unavailable(cause error, message string) error {
	if errors.Is(cause, context.DeadlineExceeded) {
		message += " It did not answer within 15 s."
	}
	return &hub.Error{Kind: hub.Unavailable, Message: message, Err: cause}
}

// commands reads once which auth commands the CLI has.
func (r *runtime) commands(ctx context.Context) (authCommands, error) {
	r.helpMu.Lock()
	defer r.helpMu.Unlock()
	if r.help != nil {
		return *r.help, nil
	}
	// --help never runs a session, even in a CLI without `auth`, which
	// prints its general help instead.
	out, code, err := r.run(ctx, "auth", "--help")
	if err != nil || code != 0 {
		return authCommands{}, r.unavailable(err, "Claude Code did not answer `claude auth --help`.")
	}
	c := parseAuthHelp(out)
	r.help = &c
	return c, nil
}

// Status reads `claude auth status --json`.
func (r *runtime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	if err := r.ended(); err != nil {
		return hub.AgentLoginStatus{}, err
	}
	cmds, err := r.commands(ctx)
	if err != nil {
		return hub.AgentLoginStatus{}, err
	}
	if !cmds.Status {
		return hub.AgentLoginStatus{}, &hub.Error{Kind: hub.Unavailable,
			Message: "This Claude Code has no `claude auth status` command: update it (`claude update`)."}
	}
	out, code, err := r.run(ctx, "auth", "status", "--json")
	// 1 is its answer when logged out.
	if err != nil || (code != 0 && code != 1) {
		return hub.AgentLoginStatus{}, r.unavailable(err, "Claude Code did not answer `claude auth status`.")
	}
	st, err := parseStatus(out)
	if err != nil {
		r.log.Warn("claude auth status was not understood")
		return hub.AgentLoginStatus{}, &hub.Error{Kind: hub.Unavailable, Err: err,
			Message: "Claude Code answered `claude auth status` in a way Wharf does not understand."}
	}
	return statusOf(st, cmds, r.version, r.env), nil
}

// LoginWithKey is refused: Claude Code takes an API key from its
// environment only. The key is not looked at.
func (r *runtime) LoginWithKey(context.Context, hub.AgentKeyLogin) error {
	return &hub.Error{Kind: hub.Invalid, Details: &hub.Details{Field: "key"},
		Message: "Claude Code does not save a typed API key: set ANTHROPIC_API_KEY in the Hub's environment (where the Hub runs) and restart the Hub."}
}

// Activate is refused: Claude Code has one login at a time.
func (r *runtime) Activate(context.Context, hub.AgentCredentialRef) error {
	return &hub.Error{Kind: hub.Invalid, Details: &hub.Details{Field: "credential"},
		Message: "Claude Code has one login at a time: there is no login to choose."}
}

// Logout runs `claude auth logout` (within CallTimeout) for a login in
// Claude Code's store: the subscription or the Console key it lists now.
func (r *runtime) Logout(ctx context.Context, ref hub.AgentCredentialRef) error {
	if err := r.ended(); err != nil {
		return err
	}
	if err := checkTarget(ref.Target); err != nil {
		return err
	}
	if why, ok := notRemovable[ref.Credential]; ok {
		return invalid(why, "credential")
	}
	if ref.Credential != credSubscription && ref.Credential != credConsole {
		return invalid("Claude Code has no such login.", "credential")
	}
	st, err := r.Status(ctx)
	if err != nil {
		return err
	}
	if !st.Capabilities.Logout || !listed(st, ref.Credential) {
		return invalid("That login is not in Claude Code's store any more.", "credential")
	}
	_, code, err := r.run(ctx, "auth", "logout")
	if err != nil || code != 0 {
		return r.unavailable(err, "Claude Code could not log out. Try again.")
	}
	r.log.Info("claude logged out")
	return nil
}

// listed reports whether the status lists credential id.
func listed(st hub.AgentLoginStatus, id string) bool {
	for _, t := range st.Targets {
		for _, c := range t.Credentials {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

// Done is closed once Close was called: the runtime has no process of
// its own to die.
func (r *runtime) Done() <-chan struct{} { return r.done }

// Close ends every login this runtime started and returns once their
// programs are gone.
func (r *runtime) Close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.done)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// checkTarget refuses a target that is not Anthropic's.
func checkTarget(target string) error {
	if target != targetID {
		return invalid("Claude Code logs in to one target: "+targetID+".", "target")
	}
	return nil
}

// invalid is a refusal naming field.
func invalid(message, field string) error {
	return &hub.Error{Kind: hub.Invalid, Message: message, Details: &hub.Details{Field: field}}
}

// ended refuses a call after Close: a closed runtime answers nothing,
// as one whose process ended does.
func (r *runtime) ended() error {
	select {
	case <-r.done:
		return hub.Errorf(hub.Unavailable, "%s's login runtime is closed.", "Claude Code")
	default:
		return nil
	}
}
