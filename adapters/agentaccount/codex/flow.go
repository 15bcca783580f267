package codex

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// The outcomes of a login that did not complete. Codex's own reason is
// not repeated: it can quote what the login page sent back.
var (
	errFlowFailed = &hub.Error{Kind: hub.Invalid,
		Message: "Codex did not complete the ChatGPT login (the sign-in was refused, abandoned or replaced by a newer one). Start it again."}
	errFlowCancelled = &hub.Error{Kind: hub.Invalid, Message: "The login was cancelled."}
	errFlowStopped   = &hub.Error{Kind: hub.Unavailable, Message: "Codex's login runtime stopped before the login finished."}
)

// What a person is told to do.
const (
	instructionsBrowser = "Open the link and sign in with your ChatGPT account. Your browser then lands on a " +
		"localhost address that does not load: copy that whole address from the address bar and paste it here."
	instructionsDevice = "Open the link, sign in with your ChatGPT account and enter the code shown here."
)

// Login starts a ChatGPT login with account/login/start: in a browser
// ({type: chatgpt}: codex starts its own loopback listener, the
// authorize URL's redirect_uri, and the pasted redirect reaches it) or
// with a device code ({type: chatgptDeviceCode}). Codex's
// account/login/completed notification settles it. Starting one makes
// codex abandon the one before.
func (r *runtime) Login(ctx context.Context, req hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	if err := checkTarget(req.Target); err != nil {
		return nil, err
	}
	var kind string
	switch req.Method {
	case methodBrowser:
		kind = loginBrowser
	case methodDevice:
		kind = loginDevice
	default:
		return nil, invalid("That is not one of Codex's browser logins.", "method")
	}
	if err := noAnswers(req.Answers); err != nil {
		return nil, err
	}
	raw, err := r.c.call(ctx, "account/login/start", map[string]string{"type": kind})
	if err != nil {
		return nil, r.refused(err, "account/login/start", "Codex refused to start this login.",
			"Codex could not start the ChatGPT login. Check that the Hub machine reaches OpenAI, then try again.", "method")
	}
	s, err := parseStarted(raw, kind)
	if err != nil {
		r.log.Warn("codex's account/login/start answer was not understood")
		r.cancelLogin(loginIDOf(raw))
		return nil, &hub.Error{Kind: hub.Unavailable, Message: "Codex answered in a way Wharf does not understand."}
	}
	f := &flow{r: r, loginID: s.LoginID, settle: driver.NewSettle()}
	if kind == loginBrowser {
		f.challenge = hub.AgentLoginChallenge{URL: s.URL, Instructions: instructionsBrowser,
			Completion: agentaccount.CompletionOf(s.URL, false)}
		if f.challenge.Completion == hub.CompletionRedirect {
			f.challenge.Callback = agentaccount.CallbackOf(s.URL)
		} else {
			f.challenge.Instructions = instructionsDevice // the page finishes it
		}
	} else {
		f.challenge = hub.AgentLoginChallenge{URL: s.URL, Instructions: instructionsDevice,
			Completion: hub.CompletionDevice, UserCode: s.UserCode}
	}
	r.register(f)
	return f, nil
}

// loginIDOf is the loginId of an answer that did not parse as a whole,
// when it has a usable one: the login codex started must still be
// cancelled.
func loginIDOf(raw []byte) string {
	var w struct {
		LoginID string `json:"loginId"`
	}
	if json.Unmarshal(raw, &w) != nil || !loginID(w.LoginID) {
		return ""
	}
	return w.LoginID
}

// cancelLogin asks codex, in the background (bounded by CallTimeout), to
// abandon login id: its listener stops. Close waits for it.
func (r *runtime) cancelLogin(id string) {
	if id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return // codex is stopping, and its listeners with it
	}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		// The answer ("canceled" or "notFound": it had ended) changes
		// nothing: the flow is settled already.
		if _, err := r.c.call(context.Background(), "account/login/cancel", map[string]string{"loginId": id}); err != nil {
			r.log.Debug("codex did not cancel a login", "err", err)
		}
	}()
}

// flow is one pending ChatGPT login.
type flow struct {
	r         *runtime
	loginID   string
	challenge hub.AgentLoginChallenge
	settle    *driver.Settle
	cancel    sync.Once
}

func (f *flow) Challenge() hub.AgentLoginChallenge { return f.challenge }

// SubmitCode is refused: codex's logins finish by a redirect or on the
// device page, never with a pasted code.
func (f *flow) SubmitCode(context.Context, string) error {
	return invalid("This login does not finish with a code.", "code")
}

// SubmitRedirect delivers the address (checked by the core against the
// challenge's Callback) to codex's listener, once. Codex then exchanges
// the code and its completion notification settles the flow.
func (f *flow) SubmitRedirect(ctx context.Context, address string) error {
	if f.challenge.Completion != hub.CompletionRedirect {
		return invalid("This login does not finish with an address.", "address")
	}
	select {
	case <-f.settle.Done():
		return invalid("This login is no longer in progress.", "address")
	default:
	}
	return driver.Deliver(ctx, address)
}

func (f *flow) Done() <-chan struct{} { return f.settle.Done() }
func (f *flow) Err() error            { return f.settle.Err() }

// Cancel settles the flow as cancelled at once and asks codex to abandon
// the login (its listener stops).
func (f *flow) Cancel() {
	f.cancel.Do(func() {
		f.r.forget(f)
		if f.settle.Finish(errFlowCancelled) {
			f.r.cancelLogin(f.loginID)
		}
	})
}

// complete settles the flow with codex's outcome.
func (f *flow) complete(success bool) {
	if success {
		f.settle.Finish(nil)
		return
	}
	f.settle.Finish(errFlowFailed)
}
