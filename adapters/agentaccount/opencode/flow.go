package opencode

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// A browser login is `POST /provider/{id}/oauth/authorize` {method, inputs?}
// → {url, method: "auto"|"code", instructions}, then `POST
// /provider/{id}/oauth/callback` {method, code?}: with the code the page
// showed ("code"), or without one ("auto"), in which case the call waits
// until the provider's plugin has its answer, from its own loopback
// listener (a redirect) or by polling (a device login). It answers true
// once the login is saved.

// flowTimeout bounds how long a login waits on OpenCode: longer than any
// attempt lives in the core, so only a forgotten flow meets it.
const flowTimeout = 30 * time.Minute

// userCode finds the code a device login's instructions show, as
// OpenCode's own terminal client finds it to copy ("Enter code: ABCD-1234").
var userCode = regexp.MustCompile(`\b[A-Z0-9]{4}-[A-Z0-9]{4,5}\b`)

// Login starts a browser login and returns once OpenCode handed back the
// URL to open (bounded by callTimeout).
func (r *runtime) Login(ctx context.Context, req hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	if err := r.checkWritable(); err != nil {
		return nil, err
	}
	r.instance.RLock()
	defer r.instance.RUnlock()
	v, err := r.view(ctx, false)
	if err != nil {
		return nil, err
	}
	m, err := v.method(req.Target, req.Method, hub.AgentMethodOAuth)
	if err != nil {
		return nil, err
	}
	answers, err := checkAnswers(m.Fields, req.Answers)
	if err != nil {
		return nil, err
	}
	index, _ := strconv.Atoi(m.ID) // an OAuth method's id is its index
	body := map[string]any{"method": index}
	if len(answers) > 0 {
		body["inputs"] = answers
	}
	path := "/provider/" + url.PathEscape(req.Target) + "/oauth"
	a, err := r.client.call(ctx, "POST", path+"/authorize", body, callTimeout)
	if err != nil {
		return nil, r.failed(err, "OpenCode's login server did not answer.")
	}
	if a.status == 400 {
		se := parseError(a.body)
		if i := slices.IndexFunc(m.Fields, func(f hub.AgentLoginField) bool { return f.Key == se.Field }); i >= 0 {
			return nil, invalid(se.Field, "OpenCode did not accept the answer to “"+m.Fields[i].Label+"”.")
		}
		return nil, invalid("", "OpenCode refused to start this login.")
	}
	if a.status != 200 {
		// OpenCode answers 500 when the provider's plugin fails, as it
		// does when the provider cannot be reached from the Hub machine.
		return nil, r.failed(statusError(path+"/authorize", a), "OpenCode could not start this login: the provider may be unreachable from the Hub machine.")
	}
	ch, expectsCode, err := challengeOf(a.body)
	if err != nil {
		return nil, err
	}
	f := &flow{r: r, Settle: driver.NewSettle(), path: path, method: index, challenge: ch, expectsCode: expectsCode}
	f.ctx, f.cancel = context.WithTimeout(r.life, flowTimeout)
	r.mu.Lock()
	r.flows[f] = struct{}{}
	r.mu.Unlock()
	go f.run()
	r.log.Info("login started", "target", req.Target, "completion", string(ch.Completion))
	return f, nil
}

// challengeOf reads an authorize answer. Its URL must be an http(s) page
// (people open it), at most agentaccount.MaxAddress bytes.
func challengeOf(body []byte) (hub.AgentLoginChallenge, bool, error) {
	var auth *struct {
		URL          string `json:"url"`
		Method       string `json:"method"`
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(body, &auth); err != nil {
		return hub.AgentLoginChallenge{}, false, unavailable(err, "OpenCode answered the login in a form the Hub does not know.")
	}
	if auth == nil { // its answer for a method that is not a browser login
		return hub.AgentLoginChallenge{}, false, invalid("method", "This login method is not a browser login.")
	}
	u, err := url.Parse(auth.URL)
	if err != nil || len(auth.URL) > agentaccount.MaxAddress || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return hub.AgentLoginChallenge{}, false, unavailable(err, "OpenCode answered the login with an address the Hub cannot show.")
	}
	ch := hub.AgentLoginChallenge{URL: auth.URL, Instructions: clean(auth.Instructions, maxText, true)}
	switch auth.Method {
	case "code":
		ch.Completion = agentaccount.CompletionOf(auth.URL, true)
	case "auto":
		ch.Completion = agentaccount.CompletionOf(auth.URL, false)
	default:
		return hub.AgentLoginChallenge{}, false, unavailable(nil, "OpenCode answered the login in a form the Hub does not know.")
	}
	switch ch.Completion {
	case hub.CompletionRedirect:
		ch.Callback = agentaccount.CallbackOf(auth.URL)
	case hub.CompletionDevice:
		ch.UserCode = userCode.FindString(ch.Instructions)
	}
	return ch, auth.Method == "code", nil
}

// flow is a browser login OpenCode waits on.
type flow struct {
	*driver.Settle
	r           *runtime
	path        string // "/provider/{id}/oauth"
	method      int
	challenge   hub.AgentLoginChallenge
	expectsCode bool

	ctx       context.Context // ends with Cancel, the runtime, or flowTimeout
	cancel    context.CancelFunc
	cancelled atomic.Bool
	submit    sync.Mutex // one submission at a time
}

// Challenge is what to show the person.
func (f *flow) Challenge() hub.AgentLoginChallenge { return f.challenge }

// Cancel abandons the login; Done closes soon after. OpenCode has no
// route to cancel one: a provider plugin's listener stays until the next
// login of that provider replaces it, or the runtime stops.
func (f *flow) Cancel() {
	f.cancelled.Store(true)
	f.cancel()
}

// run waits for the login's end: for an "auto" login, on the callback
// call that settles it; for a "code" one, on SubmitCode or the flow's end.
func (f *flow) run() {
	if f.expectsCode {
		select {
		case <-f.ctx.Done():
			f.finish(f.endError())
		case <-f.Done():
		}
		return
	}
	a, err := f.r.client.call(f.ctx, "POST", f.path+"/callback", map[string]any{"method": f.method}, 0)
	switch {
	case f.ctx.Err() != nil:
		f.finish(f.endError())
	case err != nil:
		f.finish(f.r.failed(err, "OpenCode's login server stopped answering during the login."))
	default:
		f.finish(f.outcome(a))
	}
}

// outcome maps the callback's answer: true is a saved login.
func (f *flow) outcome(a answer) error {
	switch {
	case a.ok() && isTrue(a.body):
		return nil
	case a.status == 400 && parseError(a.body).Name == "ProviderAuthOauthMissing":
		return invalid("", "OpenCode is no longer waiting for this login: start it again.")
	case a.status == 400 || a.status == 500:
		// OpenCode's answer when the provider refused (a wrong code, an
		// expired login) or its plugin failed.
		if f.expectsCode {
			return invalid("code", "The login did not complete: the provider did not accept the code. Start the login again.")
		}
		return invalid("", "The login did not complete: the provider did not accept it. Start the login again.")
	}
	return unavailable(statusError(f.path+"/callback", a), "OpenCode's login server could not complete the login.")
}

// endError is why a flow ended without an outcome.
func (f *flow) endError() error {
	switch {
	case f.cancelled.Load():
		return &hub.Error{Kind: hub.Conflict, Message: "The login was cancelled."}
	case f.r.ended():
		return &hub.Error{Kind: hub.Unavailable, Message: msgStopped}
	}
	return &hub.Error{Kind: hub.Conflict, Message: "The login took too long. Start it again."}
}

// finish settles the flow with err, first letting the server re-read its
// store after a login (so a status read once Done is closed is current).
func (f *flow) finish(err error) {
	r := f.r
	r.mu.Lock()
	_, pending := r.flows[f]
	delete(r.flows, f)
	if err == nil {
		r.stale = true
	}
	r.mu.Unlock()
	if pending && !r.ended() {
		ctx, cancel := context.WithTimeout(r.life, callTimeout)
		r.refresh(ctx)
		cancel()
	}
	if f.Finish(err) {
		r.log.Info("login ended", "completed", err == nil)
	}
	f.cancel()
}

// SubmitCode hands the code to OpenCode (callback with the code),
// bounded by callTimeout. The flow settles with OpenCode's answer.
func (f *flow) SubmitCode(ctx context.Context, code string) error {
	if !f.expectsCode {
		return invalid("code", "This login does not finish with a code.")
	}
	if code == "" {
		return invalid("code", "The code is empty.")
	}
	f.submit.Lock()
	defer f.submit.Unlock()
	if f.settled() {
		return invalid("", "This login is no longer in progress.")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(f.ctx, cancel)()
	a, err := f.r.client.call(ctx, "POST", f.path+"/callback", map[string]any{"method": f.method, "code": code}, callTimeout)
	if err != nil {
		if f.ctx.Err() != nil {
			return invalid("", "This login is no longer in progress.")
		}
		err = f.r.failed(err, "OpenCode's login server did not answer.")
		f.finish(err)
		return err
	}
	f.finish(f.outcome(a))
	return nil
}

// SubmitRedirect requests the address the browser landed on (checked by
// the core against the challenge's callback) once, on the provider
// plugin's listener; the callback call then settles the flow.
func (f *flow) SubmitRedirect(ctx context.Context, address string) error {
	if f.expectsCode || f.challenge.Completion != hub.CompletionRedirect {
		return invalid("address", "This login does not finish with an address.")
	}
	f.submit.Lock()
	defer f.submit.Unlock()
	if f.settled() {
		return invalid("", "This login is no longer in progress.")
	}
	return driver.Deliver(ctx, address)
}

// settled reports whether the flow has settled.
func (f *flow) settled() bool {
	select {
	case <-f.Done():
		return true
	default:
		return false
	}
}
