// Package gemini is the agent-login driver of Gemini CLI (`gemini`,
// 0.61), which has no auth command: its login state is read from its
// own store, and its Google login is driven the way a person at its
// terminal does it.
//
// Status reads the store, read-only and bounded (MaxFile a file):
// ~/.gemini/oauth_creds.json (a Google login), google_accounts.json (its
// email) and settings.json's selected login type, beside what the
// runtime's environment gives Gemini CLI (GEMINI_API_KEY, the Vertex AI
// variables), which a logout cannot remove. No process runs for it.
//
// A login runs `gemini` with NO_BROWSER=true in a pseudo-terminal of its
// own, in a workspace folder of Wharf's whose settings select the Google
// login and which it is told to trust (GEMINI_CLI_TRUST_WORKSPACE): it
// prints an authorization link, whose page shows a code, and reads that
// code from its terminal. Once the code is typed, the flow settles when
// oauth_creds.json is written (complete) or when Gemini CLI says it
// failed; then the program is stopped, before it could ever send a
// prompt. Logout removes only the Google login (oauth_creds.json, and
// the account's email from google_accounts.json), as Gemini CLI's own
// logout does.
//
// A key typed in is refused: Gemini CLI saves a key only from its
// full-screen dialog, so the key goes into its environment
// (GEMINI_API_KEY) instead.
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of the driver.
const (
	// CallTimeout bounds `gemini --version`, run when the version cannot
	// be read from the package Gemini CLI is installed from.
	CallTimeout = 15 * time.Second
	// MaxOutput bounds the output read from it.
	MaxOutput = 64 << 10
)

// The agent's identity.
const (
	agentID      = "gemini"
	agentName    = "Gemini CLI"
	loginCommand = "gemini"
	targetID     = "google"
	targetName   = "Google"
)

// Options configure the driver.
type Options struct {
	// Command is the program and its leading arguments; default
	// {"gemini"}.
	Command []string
	// Env is the runtime's whole environment (HOME, PATH,
	// GEMINI_CLI_HOME, GEMINI_API_KEY, …): the login lands in the store
	// it locates ($GEMINI_CLI_HOME/.gemini, default ~/.gemini).
	Env []string
	// Logger gets diagnostics: what was run and how it ended; never a
	// key, code, link, token or Gemini CLI's own output.
	Logger *slog.Logger
}

// New returns the Gemini CLI driver.
func New(opts Options) hub.AgentLoginDriver {
	if len(opts.Command) == 0 {
		opts.Command = []string{"gemini"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Command = append([]string(nil), opts.Command...)
	opts.Env = append([]string(nil), opts.Env...)
	return &geminiDriver{opts: opts}
}

type geminiDriver struct{ opts Options }

func (d *geminiDriver) Agent() hub.AgentLoginAgent {
	return hub.AgentLoginAgent{ID: agentID, Name: agentName, Command: d.opts.Command[0], LoginCommand: loginCommand}
}

// Start finds the command and Gemini CLI's store, and reads its version
// from the package it is installed from, or else from `gemini --version`
// (within ctx and CallTimeout).
func (d *geminiDriver) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	path, err := driver.LookPath(agentName, d.opts.Command[0], d.opts.Env)
	if err != nil {
		return nil, err
	}
	dir, err := geminiDir(d.opts.Env)
	if err != nil {
		return nil, &hub.Error{Kind: hub.Unavailable, Err: err,
			Message: "The Hub's environment has no home folder (HOME), where Gemini CLI keeps its login."}
	}
	r := &runtime{path: path, args: d.opts.Command[1:], env: d.opts.Env, store: store{dir: dir},
		log: d.opts.Logger.With("agent", agentID), done: make(chan struct{})}
	r.version = packageVersion(path)
	if r.version == "" {
		v, err := r.askVersion(ctx)
		if err != nil {
			return nil, err
		}
		r.version = v
	}
	return r, nil
}

// packageVersion is the version of the npm package @google/gemini-cli
// that path (its bin link, bundle/gemini.js) belongs to; "" when it is
// not one.
func packageVersion(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(real)), "package.json"))
	if err != nil || len(b) > MaxFile {
		return ""
	}
	var p struct{ Name, Version string }
	if json.Unmarshal(b, &p) != nil || p.Name != "@google/gemini-cli" {
		return ""
	}
	return versionOf([]byte(p.Version))
}

// askVersion runs `gemini --version`.
func (r *runtime) askVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	out, code, err := ptyflow.Run(ctx, ptyflow.Command{Path: r.path, Args: append(append([]string(nil), r.args...), "--version"),
		Env: r.env, Dir: filepath.Dir(r.store.dir)}, MaxOutput)
	r.log.Debug("gemini --version", "exit", code, "err", err)
	if err != nil || code != 0 {
		msg := "Gemini CLI did not answer `gemini --version`."
		if errors.Is(err, context.DeadlineExceeded) {
			msg += " It did not answer within 15 s."
		}
		return "", &hub.Error{Kind: hub.Unavailable, Message: msg, Err: err}
	}
	return versionOf(out), nil
}

// runtime is a started driver: the command and the store found.
type runtime struct {
	path    string
	args    []string // the leading arguments
	env     []string
	store   store
	log     *slog.Logger
	version string

	mu     sync.Mutex
	closed bool
	done   chan struct{}  // closed by Close
	wg     sync.WaitGroup // the flows' goroutines, added under mu while !closed
}

// Status reads Gemini CLI's store and environment.
func (r *runtime) Status(context.Context) (hub.AgentLoginStatus, error) {
	if err := r.ended(); err != nil {
		return hub.AgentLoginStatus{}, err
	}
	return statusOf(r.read(), r.version), nil
}

// read reads the store and the environment's variables. A file that
// cannot be read within the store's folder (larger than MaxFile, not a
// regular file, a link leading out of the folder) counts as missing.
func (r *runtime) read() view {
	file := func(name string) []byte {
		b, err := r.store.read(name)
		if err != nil {
			r.log.Warn("a file of gemini's store is not read", "file", name, "err", err)
			return nil
		}
		return b
	}
	return view{google: loggedIn(file(credsFile)), email: activeEmail(file(accountsFile)),
		selected: selectedType(file(settingsFile)), env: r.env}
}

// LoginWithKey is refused: Gemini CLI saves a key only from its
// full-screen dialog. The key is not looked at.
func (r *runtime) LoginWithKey(context.Context, hub.AgentKeyLogin) error {
	return &hub.Error{Kind: hub.Invalid, Details: &hub.Details{Field: "key"},
		Message: "Gemini CLI does not take a typed API key from Wharf: set GEMINI_API_KEY in the Hub's environment (where the Hub runs) and restart the Hub."}
}

// Activate is refused: choosing among Gemini CLI's logins is its
// settings' selected login type, which Wharf does not edit.
func (r *runtime) Activate(context.Context, hub.AgentCredentialRef) error {
	return &hub.Error{Kind: hub.Invalid, Details: &hub.Details{Field: "credential"},
		Message: "Wharf does not choose Gemini CLI's login: pick it with /auth in `gemini` on the Hub machine."}
}

// Logout removes the Google login from Gemini CLI's store.
func (r *runtime) Logout(_ context.Context, ref hub.AgentCredentialRef) error {
	if err := r.ended(); err != nil {
		return err
	}
	if err := checkTarget(ref.Target); err != nil {
		return err
	}
	if why, ok := notRemovable[ref.Credential]; ok {
		return invalid(why, "credential")
	}
	if ref.Credential != credGoogle {
		return invalid("Gemini CLI has no such login.", "credential")
	}
	if !r.read().google {
		return invalid("That login is not in Gemini CLI's store any more.", "credential")
	}
	if err := r.store.removeLogin(); err != nil {
		r.log.Warn("gemini's login could not be removed", "err", err)
		return &hub.Error{Kind: hub.Internal, Err: err, Message: "Wharf could not remove Gemini CLI's Google login."}
	}
	r.log.Info("gemini logged out")
	return nil
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

// checkTarget refuses a target that is not Google's.
func checkTarget(target string) error {
	if target != targetID {
		return invalid("Gemini CLI logs in to one target: "+targetID+".", "target")
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
		return hub.Errorf(hub.Unavailable, "%s's login runtime is closed.", "Gemini CLI")
	default:
		return nil
	}
}
