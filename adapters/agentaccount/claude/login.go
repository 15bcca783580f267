package claude

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of a login.
const (
	// LinkTimeout bounds the wait for `claude auth login` to print its
	// link.
	LinkTimeout = 30 * time.Second
	// TypeTimeout bounds typing a code into its terminal.
	TypeTimeout = 5 * time.Second
	// MaxLogin bounds a login's life, whatever the core does (its TTL is
	// shorter).
	MaxLogin = 15 * time.Minute
	// MaxCode bounds a pasted code (`code#state`: about 150 bytes).
	MaxCode = 2048
)

// linkLead is what `claude auth login` prints before its manual link:
// "If the browser didn't open, visit: https://…".
const linkLead = "visit:"

// The outcomes of a login that did not complete, in Wharf's words:
// Claude Code's own can quote what it was given.
var (
	errRefused = &hub.Error{Kind: hub.Invalid,
		Message: "Claude Code did not accept the code. Start the login again, and paste the code its page shows."}
	errEnded = &hub.Error{Kind: hub.Unavailable,
		Message: "Claude Code's login stopped before a code was entered. Start it again."}
	errCancelled = &hub.Error{Kind: hub.Invalid, Message: "The login was cancelled."}
	errStopped   = &hub.Error{Kind: hub.Unavailable, Message: "The login was stopped with Claude Code's login runtime."}
	errTooLong   = &hub.Error{Kind: hub.Invalid, Message: "The login took too long. Start it again."}
)

// instructions say what to do on the login's page.
var instructions = map[string]string{
	methodSubscription: "Open the link and sign in to your Claude account. The page then shows a code: copy it and paste it here.",
	methodConsole:      "Open the link and sign in to the Anthropic Console. The page then shows a code: copy it and paste it here.",
}

// Login starts `claude auth login --claudeai|--console` in a terminal of
// its own and returns once it printed its manual link (within ctx and
// LinkTimeout).
func (r *runtime) Login(ctx context.Context, req hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	if err := checkTarget(req.Target); err != nil {
		return nil, err
	}
	flag := map[string]string{methodSubscription: "--claudeai", methodConsole: "--console"}[req.Method]
	if flag == "" {
		return nil, invalid("That is not one of Claude Code's browser logins.", "method")
	}
	if len(req.Answers) > 0 {
		return nil, invalid("Claude Code's login asks for no answers.", "answers")
	}
	cmds, err := r.commands(ctx)
	if err != nil {
		return nil, err
	}
	if !cmds.Login {
		return nil, invalid("This Claude Code has no `claude auth login` command: update it (`claude update`).", "method")
	}
	term, err := ptyflow.Start(r.command("auth", "login", flag))
	if err != nil {
		return nil, &hub.Error{Kind: hub.Unavailable, Message: "Wharf could not start `claude auth login`.", Err: err}
	}
	link, err := awaitLink(ctx, term)
	if err != nil {
		term.Kill()
		r.log.Warn("claude auth login printed no usable link", "err", err)
		return nil, err
	}
	u, _ := url.Parse(link) // URLAfter parsed it
	f := &flow{r: r, term: term, state: u.Query().Get("state"), settle: driver.NewSettle(), cancel: make(chan struct{}),
		challenge: hub.AgentLoginChallenge{URL: link, Instructions: instructions[req.Method], Completion: hub.CompletionCode}}
	if f.state == "" {
		term.Kill()
		return nil, &hub.Error{Kind: hub.Unavailable, Message: "Claude Code printed a login link Wharf does not understand."}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		term.Kill()
		return nil, errStopped
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go f.run()
	r.log.Info("claude login started", "method", req.Method)
	return f, nil
}

// awaitLink waits for the manual link term prints.
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
		return done
	})
	switch {
	case err == nil && linkErr == nil:
		return link, nil
	case ctx.Err() != nil:
		return "", ctx.Err() // the caller's
	case errors.Is(err, context.DeadlineExceeded):
		return "", &hub.Error{Kind: hub.Unavailable, Err: err,
			Message: "Claude Code did not print its login link within 30 s. Check that the Hub machine reaches Anthropic, then try again."}
	case errors.Is(err, ptyflow.ErrEnded):
		return "", &hub.Error{Kind: hub.Unavailable, Err: err, Message: "`claude auth login` ended without printing a login link."}
	}
	return "", &hub.Error{Kind: hub.Unavailable, Message: "Claude Code printed a login link Wharf does not understand."}
}

// flow is one `claude auth login` waiting for its code.
type flow struct {
	r         *runtime
	term      *ptyflow.Terminal
	state     string // the link's state: a bare code is sent as code#state
	challenge hub.AgentLoginChallenge
	settle    *driver.Settle

	mu        sync.Mutex
	submitted bool // a code was typed: an exit is then a refusal

	cancel     chan struct{}
	cancelOnce sync.Once
}

// run settles the flow: by the program's exit status (0: logged in), by
// Cancel, by the runtime's Close or past MaxLogin; the program is gone
// when it returns.
func (f *flow) run() {
	defer f.r.wg.Done()
	limit := time.NewTimer(MaxLogin)
	defer limit.Stop()
	select {
	case <-f.term.Exited():
		f.mu.Lock()
		submitted := f.submitted
		f.mu.Unlock()
		switch code := f.term.ExitCode(); {
		case code == 0:
			f.settle.Finish(nil)
		case submitted:
			f.settle.Finish(errRefused)
		default:
			f.settle.Finish(errEnded)
		}
	case <-f.cancel:
		f.settle.Finish(errCancelled)
	case <-f.r.done:
		f.settle.Finish(errStopped)
	case <-limit.C:
		f.settle.Finish(errTooLong)
	}
	f.term.Kill()
	f.r.log.Info("claude login settled", "completed", f.settle.Err() == nil)
}

func (f *flow) Challenge() hub.AgentLoginChallenge { return f.challenge }

// SubmitCode types the code into the login's terminal: `code#state` as
// the page shows it, or a bare code, to which the link's state is added.
// A code of another login (another state) is refused without typing it.
func (f *flow) SubmitCode(ctx context.Context, code string) error {
	select {
	case <-f.settle.Done():
		return invalid("This login has ended. Start it again.", "code")
	default:
	}
	line, err := codeLine(code, f.state)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.submitted = true
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, TypeTimeout)
	defer cancel()
	if err := f.term.Type(ctx, line); err != nil {
		return &hub.Error{Kind: hub.Unavailable, Message: "Claude Code's login is no longer reading a code. Start it again."}
	}
	return nil
}

// codeLine is the line to type for a pasted code: one line of visible
// ASCII, `code#state` with this login's state.
func codeLine(code, state string) (string, error) {
	code = strings.TrimSpace(code)
	switch {
	case code == "":
		return "", invalid("Paste the code the login page showed.", "code")
	case len(code) > MaxCode:
		return "", invalid("The code is too long: paste only the code the login page showed.", "code")
	}
	for i := 0; i < len(code); i++ {
		if code[i] <= ' ' || code[i] > '~' {
			return "", invalid("The code must be on one line, without spaces: paste only the code the login page showed.", "code")
		}
	}
	c, s, full := strings.Cut(code, "#")
	switch {
	case c == "":
		return "", invalid("Paste the code the login page showed.", "code")
	case !full:
		return code + "#" + state, nil
	case s != state:
		return "", invalid("That code is from another login: open this login's link and paste the code its page shows.", "code")
	}
	return code, nil
}

// SubmitRedirect is refused: Claude Code's manual login ends with a
// code.
func (f *flow) SubmitRedirect(context.Context, string) error {
	return invalid("This login finishes with a code, not an address.", "address")
}

func (f *flow) Done() <-chan struct{} { return f.settle.Done() }
func (f *flow) Err() error            { return f.settle.Err() }

// Cancel abandons the login: its program is killed.
func (f *flow) Cancel() { f.cancelOnce.Do(func() { close(f.cancel) }) }
