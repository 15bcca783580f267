package gemini

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of a login.
const (
	// LinkTimeout bounds the wait for `gemini` to print its link: it
	// takes seconds to start, 15 s on a busy machine.
	LinkTimeout = 60 * time.Second
	// TypeTimeout bounds typing a code into its terminal.
	TypeTimeout = 5 * time.Second
	// CodeWait is how long Gemini CLI waits for the code before it gives
	// up on the link (and prints another).
	CodeWait = 5 * time.Minute
	// AccountGrace bounds the wait, once the login is saved, for Gemini
	// CLI to save the account's email too.
	AccountGrace = 5 * time.Second
	// MaxLogin bounds a login's life, whatever the core does.
	MaxLogin = 15 * time.Minute
	// MaxCode bounds a pasted code (Google's are about 70 bytes).
	MaxCode = 2048
	// pollEvery is how often the store is looked at once the code is
	// typed.
	pollEvery = 200 * time.Millisecond
)

// What `gemini` prints in its login, in its terminal: the lead of the
// link (which a failed code makes it print again, with a new link), the
// prompt for the code, and the start of its failures.
const (
	linkLead   = "Please visit the following URL to authorize the application:"
	codePrompt = "Enter the authorization code:"
	failed     = "Failed to authenticate"
)

// The outcomes of a login that did not complete, in Wharf's words:
// Gemini CLI's own can quote what it was given.
var (
	errRefused = &hub.Error{Kind: hub.Invalid,
		Message: "Google did not accept the code. Start the login again, and paste the code its page shows."}
	errGaveUp = &hub.Error{Kind: hub.Invalid,
		Message: "Gemini CLI stopped waiting for the code. Start the login again."}
	errEnded = &hub.Error{Kind: hub.Unavailable,
		Message: "Gemini CLI stopped before the login finished. Start it again."}
	errCancelled = &hub.Error{Kind: hub.Invalid, Message: "The login was cancelled."}
	errStopped   = &hub.Error{Kind: hub.Unavailable, Message: "The login was stopped with Gemini CLI's login runtime."}
	errTooLong   = &hub.Error{Kind: hub.Invalid, Message: "The login took too long. Start it again."}
)

const instructions = "Open the link and sign in with your Google account. The page then shows an authorization code: copy it and paste it here."

// loginSettings are the settings of the login's workspace folder: the
// Google login selected, for this run of `gemini` only.
const loginSettings = `{"security":{"auth":{"selectedType":"oauth-personal"}}}` + "\n"

// Login runs `gemini` with NO_BROWSER=true in a terminal of its own and
// returns once it printed its link and asked for the code (within ctx
// and LinkTimeout).
func (r *runtime) Login(ctx context.Context, req hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	if err := checkTarget(req.Target); err != nil {
		return nil, err
	}
	if req.Method != methodGoogle {
		return nil, invalid("That is not one of Gemini CLI's browser logins.", "method")
	}
	if len(req.Answers) > 0 {
		return nil, invalid("Gemini CLI's login asks for no answers.", "answers")
	}
	if driver.Getenv(r.env, encryptedStorage) == "true" {
		return nil, invalid("Gemini CLI keeps its Google login encrypted here ("+encryptedStorage+"), where Wharf cannot see it: sign in with `gemini` on the Hub machine.", "method")
	}
	if r.read().google {
		// Gemini CLI would use it and never ask.
		return nil, invalid("Gemini CLI is logged in with Google already: log out first to log in with another account.", "method")
	}
	dir, err := r.workspace()
	if err != nil {
		r.log.Warn("gemini's login workspace could not be made", "err", err)
		return nil, &hub.Error{Kind: hub.Internal, Err: err, Message: "Wharf could not prepare Gemini CLI's login."}
	}
	before := r.store.stampOf(credsFile)
	accountsBefore := r.store.stampOf(accountsFile)
	term, err := ptyflow.Start(ptyflow.Command{Path: r.path, Args: r.args, Env: loginEnv(r.env), Dir: dir})
	if err != nil {
		return nil, &hub.Error{Kind: hub.Unavailable, Message: "Wharf could not start `gemini`.", Err: err}
	}
	// Watched once the link is found: a failure, or a new link, ends
	// this one.
	failedSeen, again := term.Watch(failed), term.Watch(linkLead)
	link, err := awaitLink(ctx, term)
	if err != nil {
		term.Kill()
		r.log.Warn("gemini printed no usable login link", "err", err)
		return nil, err
	}
	f := &flow{r: r, term: term, before: before, accountsBefore: accountsBefore, settle: driver.NewSettle(),
		cancel: make(chan struct{}), typed: make(chan struct{}), failed: failedSeen, again: again,
		challenge: hub.AgentLoginChallenge{URL: link, Instructions: instructions, Completion: hub.CompletionCode,
			ExpiresAt: time.Now().Add(CodeWait)}}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		term.Kill()
		return nil, errStopped
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go f.run()
	r.log.Info("gemini login started")
	return f, nil
}

// workspace is the folder `gemini` runs in for a login, the same every
// time (Gemini CLI records each folder it ran in): Wharf's own,
// $XDG_CACHE_HOME/wharf/gemini-login (default ~/.cache/…), holding only
// the settings selecting the Google login.
func (r *runtime) workspace() (string, error) {
	cache := driver.Getenv(r.env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(cache) {
		home := driver.Getenv(r.env, "HOME")
		if !filepath.IsAbs(home) {
			home = filepath.Dir(r.store.dir) // GEMINI_CLI_HOME
		}
		cache = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(cache, "wharf", "gemini-login")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.Mkdir(".gemini", 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, replace(root, filepath.Join(".gemini", settingsFile), []byte(loginSettings))
}

// loginEnv is the environment of the login's `gemini`: the runtime's,
// with no browser (the link is printed), the workspace's settings
// trusted, and without what would make it log in some other way or not
// in a terminal (a CI variable makes it headless; an access token or
// application credentials would be used instead).
func loginEnv(env []string) []string {
	drop := map[string]bool{"NO_BROWSER": true, "GEMINI_CLI_TRUST_WORKSPACE": true, "CI": true, "GITHUB_ACTIONS": true,
		"GOOGLE_CLOUD_ACCESS_TOKEN": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "GOOGLE_GENAI_USE_GCA": true}
	out := make([]string, 0, len(env)+3)
	term := false
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] {
			continue
		}
		term = term || k == "TERM"
		out = append(out, kv)
	}
	if !term {
		out = append(out, "TERM=xterm-256color")
	}
	return append(out, "NO_BROWSER=true", "GEMINI_CLI_TRUST_WORKSPACE=true")
}

// awaitLink waits for the link term prints and its prompt for the code.
func awaitLink(ctx context.Context, term *ptyflow.Terminal) (string, error) {
	bounded, cancel := context.WithTimeout(ctx, LinkTimeout)
	defer cancel()
	var (
		link    string
		linkErr error
	)
	err := term.Expect(bounded, func(text []byte) bool {
		l, done, err := ptyflow.URLAfter(text, linkLead)
		link, linkErr = l, err
		return done && (err != nil || bytes.Contains(text[bytes.Index(text, []byte(linkLead)):], []byte(codePrompt)))
	})
	switch {
	case err == nil && linkErr == nil:
		return link, nil
	case ctx.Err() != nil:
		return "", ctx.Err() // the caller's
	case errors.Is(err, context.DeadlineExceeded):
		return "", &hub.Error{Kind: hub.Unavailable, Err: err,
			Message: "Gemini CLI did not start a Google login within 60 s (do its settings on the Hub machine enforce another login type?)."}
	case errors.Is(err, ptyflow.ErrEnded):
		return "", &hub.Error{Kind: hub.Unavailable, Err: err, Message: "`gemini` ended without printing a login link."}
	}
	return "", &hub.Error{Kind: hub.Unavailable, Message: "Gemini CLI printed a login link Wharf does not understand."}
}

// flow is one `gemini` waiting for its code.
type flow struct {
	r              *runtime
	term           *ptyflow.Terminal
	before         stamp // oauth_creds.json when the login started
	accountsBefore stamp // google_accounts.json then
	challenge      hub.AgentLoginChallenge
	settle         *driver.Settle
	failed, again  <-chan struct{}

	typeOnce   sync.Once
	typed      chan struct{} // closed once a code was typed
	cancel     chan struct{}
	cancelOnce sync.Once
}

// run settles the flow and stops `gemini`: complete once, after a code
// was typed, oauth_creds.json is written anew with a login (and the
// account's email saved, or AccountGrace passed); failed when Gemini
// CLI says so or prints a new link; cancelled; stopped with the runtime;
// or past MaxLogin. The program is gone when it returns: it would go on
// to its full-screen session otherwise.
func (f *flow) run() {
	defer f.r.wg.Done()
	limit := time.NewTimer(MaxLogin)
	defer limit.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var outcome error
	var saved time.Time // when the login was seen saved
	typed, typedCh := false, f.typed
wait:
	for {
		select {
		case <-typedCh:
			typed, typedCh = true, nil // a nil channel is never ready again
		case <-tick.C:
			if !typed {
				continue
			}
			if saved.IsZero() && f.loginSaved() {
				saved = time.Now()
			}
			if !saved.IsZero() && (!f.r.store.stampOf(accountsFile).same(f.accountsBefore) || time.Since(saved) > AccountGrace) {
				break wait
			}
		case <-f.failed:
			outcome = f.refusal(typed)
			break wait
		case <-f.again:
			outcome = f.refusal(typed)
			break wait
		case <-f.term.Exited():
			outcome = errEnded
			if f.loginSaved() {
				outcome = nil
			}
			break wait
		case <-f.cancel:
			outcome = errCancelled
			break wait
		case <-f.r.done:
			outcome = errStopped
			break wait
		case <-limit.C:
			outcome = errTooLong
			break wait
		}
	}
	if outcome == errCancelled {
		f.settle.Finish(outcome) // at once; the program follows
	}
	f.term.Kill()
	// Otherwise once the program is gone: a completed login is then all
	// in the store, and nothing can send a prompt.
	f.settle.Finish(outcome)
	f.r.log.Info("gemini login settled", "completed", outcome == nil)
}

// refusal is why Gemini CLI gave up: the code it was given, or waiting.
func (f *flow) refusal(typed bool) error {
	if typed {
		return errRefused
	}
	return errGaveUp
}

// loginSaved reports whether oauth_creds.json was written since the
// login started and holds a login.
func (f *flow) loginSaved() bool {
	if f.r.store.stampOf(credsFile).same(f.before) {
		return false
	}
	b, err := f.r.store.read(credsFile)
	return err == nil && loggedIn(b)
}

func (f *flow) Challenge() hub.AgentLoginChallenge { return f.challenge }

// SubmitCode types the code into `gemini`'s terminal.
func (f *flow) SubmitCode(ctx context.Context, code string) error {
	select {
	case <-f.settle.Done():
		return invalid("This login has ended. Start it again.", "code")
	default:
	}
	code = strings.TrimSpace(code)
	switch {
	case code == "":
		return invalid("Paste the code the login page showed.", "code")
	case len(code) > MaxCode:
		return invalid("The code is too long: paste only the code the login page showed.", "code")
	}
	for i := 0; i < len(code); i++ {
		if code[i] <= ' ' || code[i] > '~' {
			return invalid("The code must be on one line, without spaces: paste only the code the login page showed.", "code")
		}
	}
	f.typeOnce.Do(func() { close(f.typed) })
	ctx, cancel := context.WithTimeout(ctx, TypeTimeout)
	defer cancel()
	if err := f.term.Type(ctx, code); err != nil {
		return &hub.Error{Kind: hub.Unavailable, Message: "Gemini CLI's login is no longer reading a code. Start it again."}
	}
	return nil
}

// SubmitRedirect is refused: Gemini CLI's login without a browser ends
// with a code.
func (f *flow) SubmitRedirect(context.Context, string) error {
	return invalid("This login finishes with a code, not an address.", "address")
}

func (f *flow) Done() <-chan struct{} { return f.settle.Done() }
func (f *flow) Err() error            { return f.settle.Err() }

// Cancel abandons the login: `gemini` is stopped.
func (f *flow) Cancel() { f.cancelOnce.Do(func() { close(f.cancel) }) }
