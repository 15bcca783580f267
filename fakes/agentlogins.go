package fakes

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

var _ hub.AgentLogins = (*AgentLogins)(nil)

// AgentLogins is a hub.AgentLogins over FakeAgents: agents whose login
// store lives in memory.
type AgentLogins struct{ agents []*FakeAgent }

// NewAgentLogins returns the set of agents, in order.
func NewAgentLogins(agents ...*FakeAgent) *AgentLogins { return &AgentLogins{agents: agents} }

// Drivers implements hub.AgentLogins.
func (l *AgentLogins) Drivers() []hub.AgentLoginDriver {
	out := make([]hub.AgentLoginDriver, len(l.agents))
	for i, a := range l.agents {
		out[i] = a
	}
	return out
}

// FakeAgent is one agent and its login store, scripted by tests. Its
// one target (FakeTarget) offers a key method (FakeKeyMethod: keys
// starting "sk-" are accepted, others refused with a message that
// echoes the key, so redaction shows) and three oauth methods, one per
// completion (FakeCodeMethod, FakeRedirectMethod, FakeDeviceMethod). A
// code login completes with the code Code(challenge) gives, a redirect
// login when the delivered address carries that code as `code`, a
// device login when Approve is called; a wrong code fails the login
// with a message echoing it. Safe for concurrent use.
type FakeAgent struct {
	info hub.AgentLoginAgent

	mu        sync.Mutex
	installed bool
	gate      chan struct{} // when set, Start and Status wait for it to close
	statusErr error
	creds     []hub.AgentCredential
	caps      hub.AgentAccountCapabilities
	serial    int
	rt        *fakeLoginRuntime
	starts    int
	delivered []string // addresses SubmitRedirect requested
	flows     []*fakeFlow
}

// The fake's target and method ids.
const (
	FakeTarget         = "provider"
	FakeKeyMethod      = "api-key"
	FakeCodeMethod     = "code-login"
	FakeRedirectMethod = "browser-login"
	FakeDeviceMethod   = "device-login"
	FakeCallback       = "http://localhost:1455/auth/callback"
)

// NewFakeAgent returns an installed agent with no saved login that can
// log in and out and choose its active credential.
func NewFakeAgent(id, name string) *FakeAgent {
	return &FakeAgent{info: hub.AgentLoginAgent{ID: id, Name: name, Command: id, LoginCommand: id + " login"},
		installed: true, caps: hub.AgentAccountCapabilities{Login: true, Logout: true, Activate: true}}
}

// SetInstalled scripts whether the agent's command is found.
func (a *FakeAgent) SetInstalled(v bool) { a.mu.Lock(); a.installed = v; a.mu.Unlock() }

// Hold makes Start and Status wait until Release: a slow agent.
func (a *FakeAgent) Hold() { a.mu.Lock(); a.gate = make(chan struct{}); a.mu.Unlock() }

// Release lets a Held agent answer.
func (a *FakeAgent) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate != nil {
		close(a.gate)
		a.gate = nil
	}
}

// FailStatus scripts Status's error (nil: answer).
func (a *FakeAgent) FailStatus(err error) { a.mu.Lock(); a.statusErr = err; a.mu.Unlock() }

// AddEnvCredential adds a login from an environment variable, which
// cannot be removed.
func (a *FakeAgent) AddEnvCredential(variable string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creds = append(a.creds, hub.AgentCredential{ID: "env:" + variable, Label: variable, Kind: hub.AgentCredentialEnv, Variables: []string{variable}})
}

// Crash ends the running runtime on its own.
func (a *FakeAgent) Crash() {
	a.mu.Lock()
	rt := a.rt
	a.mu.Unlock()
	if rt != nil {
		rt.end()
	}
}

// Starts counts the runtimes started.
func (a *FakeAgent) Starts() int { a.mu.Lock(); defer a.mu.Unlock(); return a.starts }

// Running reports whether a runtime runs.
func (a *FakeAgent) Running() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.rt != nil }

// Delivered lists the addresses redirect logins requested.
func (a *FakeAgent) Delivered() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.delivered)
}

// Code is the code the login page of ch shows.
func (a *FakeAgent) Code(ch hub.AgentLoginChallenge) string {
	u, _ := url.Parse(ch.URL)
	return "code-" + u.Query().Get("state")
}

// Approve completes the pending device login, as a person entering its
// user code on the page would; it reports whether there was one.
func (a *FakeAgent) Approve() bool {
	a.mu.Lock()
	var f *fakeFlow
	for _, fl := range a.flows {
		if fl.ch.Completion == hub.CompletionDevice && !fl.settled() {
			f = fl
		}
	}
	a.mu.Unlock()
	if f == nil {
		return false
	}
	a.complete(f)
	return true
}

// Agent implements hub.AgentLoginDriver.
func (a *FakeAgent) Agent() hub.AgentLoginAgent { return a.info }

// Start implements hub.AgentLoginDriver.
func (a *FakeAgent) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	if err := a.wait(ctx); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.installed {
		return nil, &hub.Error{Kind: hub.Conflict, Err: hub.ErrAgentNotInstalled,
			Message: a.info.Name + " is not installed on the Hub machine: `" + a.info.Command + "` was not found."}
	}
	a.starts++
	a.rt = &fakeLoginRuntime{a: a, done: make(chan struct{})}
	return a.rt, nil
}

// wait waits for a Held agent's Release.
func (a *FakeAgent) wait(ctx context.Context) error {
	a.mu.Lock()
	gate := a.gate
	a.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return hub.Wrap(hub.Unavailable, ctx.Err(), "the agent did not answer")
	}
}

// status is the agent's store as a status.
func (a *FakeAgent) status() hub.AgentLoginStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	field := hub.AgentLoginField{Key: "region", Label: "Region", Kind: "text", ValueType: "string"}
	t := hub.AgentLoginTarget{ID: FakeTarget, Name: "Provider", Connected: len(a.creds) > 0,
		Credentials: slices.Clone(a.creds), Methods: []hub.AgentLoginMethod{
			{ID: FakeKeyMethod, Kind: hub.AgentMethodKey, Label: "API key", Fields: []hub.AgentLoginField{field}},
			{ID: FakeCodeMethod, Kind: hub.AgentMethodOAuth, Label: "Log in (code)", Fields: []hub.AgentLoginField{}, Completion: hub.CompletionCode},
			{ID: FakeRedirectMethod, Kind: hub.AgentMethodOAuth, Label: "Log in (browser)", Fields: []hub.AgentLoginField{}, Completion: hub.CompletionRedirect},
			{ID: FakeDeviceMethod, Kind: hub.AgentMethodOAuth, Label: "Log in (device)", Fields: []hub.AgentLoginField{}, Completion: hub.CompletionDevice},
		}}
	return hub.AgentLoginStatus{Version: "1.0.0", Capabilities: a.caps, Targets: []hub.AgentLoginTarget{t}}
}

// save adds a credential of kind, active, the others made inactive.
func (a *FakeAgent) save(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.serial++
	for i := range a.creds {
		a.creds[i].Active = false
	}
	a.creds = append(a.creds, hub.AgentCredential{ID: fmt.Sprintf("%s-%d", kind, a.serial),
		Label: fmt.Sprintf("Login %d", a.serial), Kind: kind, Active: true, Removable: true})
}

// complete saves f's login, then settles f: whoever waits for the flow
// finds the login in the store, as with a real agent.
func (a *FakeAgent) complete(f *fakeFlow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return
	default:
	}
	a.save(hub.AgentCredentialOAuth)
	close(f.done)
}

// fakeLoginRuntime is a started FakeAgent runtime.
type fakeLoginRuntime struct {
	a    *FakeAgent
	once sync.Once
	done chan struct{}
}

func (r *fakeLoginRuntime) end() {
	r.once.Do(func() {
		close(r.done)
		r.a.mu.Lock()
		if r.a.rt == r {
			r.a.rt = nil
		}
		flows := slices.Clone(r.a.flows)
		r.a.mu.Unlock()
		for _, f := range flows {
			f.settle(hub.Errorf(hub.Unavailable, "the agent ended"))
		}
	})
}

func (r *fakeLoginRuntime) alive() error {
	select {
	case <-r.done:
		return hub.Errorf(hub.Unavailable, "the agent's login interface ended")
	default:
		return nil
	}
}

func (r *fakeLoginRuntime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	if err := r.alive(); err != nil {
		return hub.AgentLoginStatus{}, err
	}
	if err := r.a.wait(ctx); err != nil {
		return hub.AgentLoginStatus{}, err
	}
	r.a.mu.Lock()
	err := r.a.statusErr
	r.a.mu.Unlock()
	if err != nil {
		return hub.AgentLoginStatus{}, err
	}
	return r.a.status(), nil
}

func (r *fakeLoginRuntime) LoginWithKey(ctx context.Context, req hub.AgentKeyLogin) error {
	if err := r.alive(); err != nil {
		return err
	}
	if req.Target != FakeTarget || req.Method != FakeKeyMethod {
		return &hub.Error{Kind: hub.Invalid, Message: "No such login method.", Details: &hub.Details{Field: "method"}}
	}
	if !strings.HasPrefix(req.Key, "sk-") {
		// A careless agent echoes what it was given: the core redacts it.
		return &hub.Error{Kind: hub.Invalid, Message: "The provider refused the key " + req.Key + ".", Details: &hub.Details{Field: "key"}}
	}
	r.a.save(hub.AgentCredentialKey)
	return nil
}

func (r *fakeLoginRuntime) Login(ctx context.Context, req hub.AgentLoginStart) (hub.AgentLoginFlow, error) {
	if err := r.alive(); err != nil {
		return nil, err
	}
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	r.a.serial++
	state := fmt.Sprintf("s%d", r.a.serial)
	u := "https://login.example/authorize?state=" + state
	ch := hub.AgentLoginChallenge{URL: u, Instructions: "Open the page and log in."}
	switch req.Method {
	case FakeCodeMethod:
		ch.Completion = hub.CompletionCode
	case FakeRedirectMethod:
		ch.URL += "&redirect_uri=" + url.QueryEscape(FakeCallback)
		ch.Completion, ch.Callback = agentaccount.CompletionOf(ch.URL, false), agentaccount.CallbackOf(ch.URL)
	case FakeDeviceMethod:
		ch.Completion, ch.UserCode = hub.CompletionDevice, "ABCD-"+state
	default:
		return nil, &hub.Error{Kind: hub.Invalid, Message: "No such login method.", Details: &hub.Details{Field: "method"}}
	}
	f := &fakeFlow{a: r.a, ch: ch, want: "code-" + state, done: make(chan struct{})}
	r.a.flows = append(r.a.flows, f)
	return f, nil
}

func (r *fakeLoginRuntime) Logout(ctx context.Context, ref hub.AgentCredentialRef) error {
	return r.change(ref, func(creds []hub.AgentCredential, i int) []hub.AgentCredential {
		return slices.Delete(creds, i, i+1)
	})
}

func (r *fakeLoginRuntime) Activate(ctx context.Context, ref hub.AgentCredentialRef) error {
	return r.change(ref, func(creds []hub.AgentCredential, i int) []hub.AgentCredential {
		for j := range creds {
			creds[j].Active = j == i
		}
		return creds
	})
}

// change applies f to the credential ref names.
func (r *fakeLoginRuntime) change(ref hub.AgentCredentialRef, f func([]hub.AgentCredential, int) []hub.AgentCredential) error {
	if err := r.alive(); err != nil {
		return err
	}
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	i := slices.IndexFunc(r.a.creds, func(c hub.AgentCredential) bool { return c.ID == ref.Credential })
	if i < 0 || ref.Target != FakeTarget {
		return &hub.Error{Kind: hub.Invalid, Message: "No such saved login.", Details: &hub.Details{Field: "credential"}}
	}
	r.a.creds = f(r.a.creds, i)
	return nil
}

func (r *fakeLoginRuntime) Done() <-chan struct{} { return r.done }

func (r *fakeLoginRuntime) Close() {
	r.end()
}

// fakeFlow is a FakeAgent's login in progress.
type fakeFlow struct {
	a    *FakeAgent
	ch   hub.AgentLoginChallenge
	want string

	mu   sync.Mutex
	done chan struct{}
	err  error
}

func (f *fakeFlow) settle(err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.done:
		return false
	default:
	}
	f.err = err
	close(f.done)
	return true
}

func (f *fakeFlow) settled() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

func (f *fakeFlow) Challenge() hub.AgentLoginChallenge { return f.ch }

func (f *fakeFlow) SubmitCode(ctx context.Context, code string) error {
	if code != f.want {
		f.settle(&hub.Error{Kind: hub.Invalid, Message: "The code " + code + " is not the one the page showed."})
		return nil
	}
	f.a.complete(f)
	return nil
}

func (f *fakeFlow) SubmitRedirect(ctx context.Context, address string) error {
	f.a.mu.Lock()
	f.a.delivered = append(f.a.delivered, address)
	f.a.mu.Unlock()
	u, err := url.Parse(address)
	if err != nil || u.Query().Get("code") != f.want {
		f.settle(hub.Errorf(hub.Invalid, "The login's listener refused the answer."))
		return nil
	}
	f.a.complete(f)
	return nil
}

func (f *fakeFlow) Done() <-chan struct{} { return f.done }

func (f *fakeFlow) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeFlow) Cancel() { f.settle(hub.Errorf(hub.Invalid, "The login was cancelled.")) }
