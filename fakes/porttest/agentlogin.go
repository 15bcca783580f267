package porttest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// AgentLoginScene is one agent on a machine for the AgentLoginDriver
// suite: its driver over a fresh store holding no login, and the
// person's side of a browser login (the page they open, what they paste
// back).
type AgentLoginScene interface {
	// Driver is the driver under test, over a store holding no login.
	Driver() hub.AgentLoginDriver
	// Missing is a driver of the same agent whose command is not found.
	Missing() hub.AgentLoginDriver
	// Target is the target the suite logs in to.
	Target() string
	// KeyLogin is a key method of Target and a key the agent accepts;
	// method "" when the agent takes no key from the Hub: a key login is
	// then refused Invalid, naming a field.
	KeyLogin() (method, key string)
	// BrowserLogin is an oauth method of Target; "" when the agent's
	// login interface hands the Hub no browser login: a login is then
	// refused Invalid, naming a field, and the browser subtests skip.
	BrowserLogin() string
	// Finish does what the person does on the page of ch: it returns the
	// code to paste (completion code), or the address the browser landed
	// on (redirect), or approves the login on the page itself and
	// returns "" (device).
	Finish(t *testing.T, ch hub.AgentLoginChallenge) string
}

// agentDeadline bounds every wait of the suite.
const agentDeadline = 30 * time.Second

// AgentLoginDriver runs the hub.AgentLoginDriver contract on the scenes
// newScene makes, a fresh one per subtest.
func AgentLoginDriver(t *testing.T, newScene func(t *testing.T) AgentLoginScene) {
	t.Run("a driver whose command is missing says the agent is not installed", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		d := sc.Missing()
		rt, err := d.Start(ctxFor(t))
		is.True(rt == nil)                                               // nothing started
		is.True(errors.Is(err, hub.ErrAgentNotInstalled))                // not installed
		is.True(strings.Contains(hub.MessageOf(err), d.Agent().Command)) // naming the command it looked for
	})
	t.Run("a fresh store lists the target, its methods and no removable login", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		rt := start(t, sc.Driver())
		st, err := rt.Status(ctxFor(t))
		is.NoErr(err) // the status reads
		tg := target(st, sc.Target())
		is.True(tg != nil)     // the target is listed
		is.True(!tg.Connected) // with no login
		if sc.BrowserLogin() != "" {
			is.True(method(tg, sc.BrowserLogin()) != nil) // and the browser method
			is.Equal(method(tg, sc.BrowserLogin()).Kind, hub.AgentMethodOAuth)
		}
		for _, c := range tg.Credentials {
			is.True(!c.Removable) // anything listed comes from outside the agent's store
		}
	})
	t.Run("a key login lands in the agent's store, and logout removes it", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		rt := start(t, sc.Driver())
		m, key := sc.KeyLogin()
		if m == "" {
			err := rt.LoginWithKey(ctxFor(t), hub.AgentKeyLogin{Target: sc.Target(), Method: "key", Key: "sk-porttest-key"})
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			var he *hub.Error
			is.True(errors.As(err, &he) && he.Details != nil && he.Details.Field != "") // naming the field
			is.True(!strings.Contains(err.Error(), "sk-porttest-key"))                  // never the key
			return
		}
		is.NoErr(rt.LoginWithKey(ctxFor(t), hub.AgentKeyLogin{Target: sc.Target(), Method: m, Key: key}))
		st, err := rt.Status(ctxFor(t))
		is.NoErr(err)
		tg := target(st, sc.Target())
		is.True(tg != nil && tg.Connected) // logged in
		var saved *hub.AgentCredential
		for i, c := range tg.Credentials {
			if c.Removable {
				saved = &tg.Credentials[i]
			}
		}
		is.True(saved != nil) // the saved login is listed, removable
		if !st.Capabilities.Logout {
			return
		}
		is.NoErr(rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: sc.Target(), Credential: saved.ID}))
		st, err = rt.Status(ctxFor(t))
		is.NoErr(err)
		for _, c := range target(st, sc.Target()).Credentials {
			is.True(c.ID != saved.ID) // logged out
		}
	})
	t.Run("a driver with no browser login refuses one, naming a field", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		if sc.BrowserLogin() != "" {
			t.Skip("the agent offers a browser login")
		}
		rt := start(t, sc.Driver())
		flow, err := rt.Login(ctxFor(t), hub.AgentLoginStart{Target: sc.Target(), Method: "oauth"})
		is.True(flow == nil)                   // nothing started
		is.Equal(hub.KindOf(err), hub.Invalid) // refused
		var he *hub.Error
		is.True(errors.As(err, &he) && he.Details != nil && he.Details.Field != "") // naming the field
		is.True(he.Message != "")                                                   // saying what to do instead
	})
	t.Run("a browser login completes as the person finishes it", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		skipWithoutBrowser(t, sc)
		rt := start(t, sc.Driver())
		flow, err := rt.Login(ctxFor(t), hub.AgentLoginStart{Target: sc.Target(), Method: sc.BrowserLogin()})
		is.NoErr(err) // the login starts
		t.Cleanup(flow.Cancel)
		ch := flow.Challenge()
		is.True(strings.HasPrefix(ch.URL, "http")) // with a page to open
		answer := sc.Finish(t, ch)
		switch ch.Completion {
		case hub.CompletionCode:
			is.NoErr(flow.SubmitCode(ctxFor(t), answer)) // the code is handed over
		case hub.CompletionRedirect:
			address, err := agentaccount.CheckRedirect(ch.Callback, answer)
			is.NoErr(err)                                     // the landed address is the callback's, as the core checks
			is.NoErr(flow.SubmitRedirect(ctxFor(t), address)) // and is delivered
		case hub.CompletionDevice:
			is.True(ch.UserCode != "") // a device login shows its code
		default:
			t.Fatalf("completion %q", ch.Completion)
		}
		waitDone(t, flow.Done())
		is.NoErr(flow.Err()) // logged in
		st, err := rt.Status(ctxFor(t))
		is.NoErr(err)
		is.True(target(st, sc.Target()).Connected) // the login is in the agent's store
	})
	t.Run("a cancelled login ends and says so", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		skipWithoutBrowser(t, sc)
		rt := start(t, sc.Driver())
		flow, err := rt.Login(ctxFor(t), hub.AgentLoginStart{Target: sc.Target(), Method: sc.BrowserLogin()})
		is.NoErr(err)
		flow.Cancel()
		waitDone(t, flow.Done())
		is.True(flow.Err() != nil) // not logged in
		flow.Cancel()              // again: idempotent
	})
	t.Run("close ends the runtime and its logins", func(t *testing.T) {
		is := is.New(t)
		sc := newScene(t)
		rt, err := sc.Driver().Start(ctxFor(t))
		is.NoErr(err)
		var flow hub.AgentLoginFlow
		if sc.BrowserLogin() != "" {
			flow, err = rt.Login(ctxFor(t), hub.AgentLoginStart{Target: sc.Target(), Method: sc.BrowserLogin()})
			is.NoErr(err)
		}
		rt.Close()
		waitDone(t, rt.Done()) // the runtime is done
		if flow != nil {
			waitDone(t, flow.Done()) // and its login with it
			is.True(flow.Err() != nil)
		}
		_, err = rt.Status(ctxFor(t))
		is.True(err != nil) // a closed runtime answers nothing
	})
}

// skipWithoutBrowser skips a browser subtest for an agent that hands the
// Hub no browser login.
func skipWithoutBrowser(t *testing.T, sc AgentLoginScene) {
	if sc.BrowserLogin() == "" {
		t.Skip("the agent hands the Hub no browser login")
	}
}

// ctxFor is a context bounded by the suite's deadline.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), agentDeadline)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, d hub.AgentLoginDriver) hub.AgentLoginRuntime {
	t.Helper()
	rt, err := d.Start(ctxFor(t))
	if err != nil {
		t.Fatalf("start %s: %v", d.Agent().ID, err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func waitDone(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(agentDeadline):
		t.Fatal("not done in time")
	}
}

func target(st hub.AgentLoginStatus, id string) *hub.AgentLoginTarget {
	for i := range st.Targets {
		if st.Targets[i].ID == id {
			return &st.Targets[i]
		}
	}
	return nil
}

func method(t *hub.AgentLoginTarget, id string) *hub.AgentLoginMethod {
	for i := range t.Methods {
		if t.Methods[i].ID == id {
			return &t.Methods[i]
		}
	}
	return nil
}
