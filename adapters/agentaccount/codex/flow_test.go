package codex_test

import (
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

func chatgptLogin(method string) hub.AgentLoginStart {
	return hub.AgentLoginStart{Agent: "codex", Target: "openai", Method: method}
}

// landing is the address a browser lands on after signing in to flow's
// page, as a person pastes it (localhost, as browsers show it), checked
// by the core's rule.
func landing(t *testing.T, flow hub.AgentLoginFlow, query url.Values) string {
	t.Helper()
	is := is.New(t)
	cb, err := url.Parse(flow.Challenge().Callback)
	is.NoErr(err) // the callback is an address
	pasted := "http://localhost:" + cb.Port() + cb.Path + "?" + query.Encode()
	address, err := agentaccount.CheckRedirect(flow.Challenge().Callback, pasted)
	is.NoErr(err) // the core accepts it
	return address
}

// stateOf is the state the authorize URL carries.
func stateOf(t *testing.T, flow hub.AgentLoginFlow) string {
	t.Helper()
	u, err := url.Parse(flow.Challenge().URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}

func TestABrowserLoginCompletesWhenTheRedirectReachesCodexsListenerOnce(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_CODE=code-5e1f", "CODEXSERVER_EMAIL=ana@example.com", "CODEXSERVER_PLAN=pro")
	rt := f.start()
	flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.NoErr(err) // started
	ch := flow.Challenge()
	is.True(strings.HasPrefix(ch.URL, "https://auth.openai.com/oauth/authorize?")) // OpenAI's page
	is.Equal(ch.Completion, hub.CompletionRedirect)                                // finished by the redirect
	is.Equal(ch.Callback, agentaccount.CallbackOf(ch.URL))                         // to codex's listener
	is.True(strings.HasPrefix(ch.Callback, "http://127.0.0.1:"))                   // on loopback
	is.True(ch.Instructions != "")                                                 // saying what to do
	query := url.Values{"code": {"code-5e1f"}, "state": {stateOf(t, flow)}}
	is.NoErr(flow.SubmitRedirect(ctxFor(t), landing(t, flow, query))) // delivered
	settled(t, flow.Done(), "the login")
	is.NoErr(flow.Err())                                                           // completed
	is.Equal(f.recorded("callback"), []string{"/auth/callback?" + query.Encode()}) // the listener got the query, once
	is.True(strings.Contains(f.auth(), `"auth_mode": "chatgpt"`))                  // codex saved the login
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                                                                                    // read
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "subscription", Email: "ana@example.com", Plan: "pro", Provider: "openai"}) // the subscription
	is.Equal(st.Targets[0].Credentials, []hub.AgentCredential{{ID: "chatgpt", Label: "ChatGPT (ana@example.com)",
		Kind: hub.AgentCredentialOAuth, Active: true, Removable: true}}) // saved, removable
	err = flow.SubmitRedirect(ctxFor(t), landing(t, flow, query))
	is.Equal(hub.KindOf(err), hub.Invalid)   // a settled login takes no more addresses
	is.Equal(len(f.recorded("callback")), 1) // and none reached the listener
	noSecret(t, "code-5e1f", f.log.String()) // the code is not logged
}

func TestABrowserLoginTheSignInRefusedFailsWithoutRepeatingThePage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query func(state string) url.Values
	}{
		{"a code the token exchange refuses", func(state string) url.Values {
			return url.Values{"code": {"not-the-code-91c2"}, "state": {state}}
		}},
		{"an error from the sign-in page", func(state string) url.Values {
			return url.Values{"error": {"access_denied"}, "error_description": {"not-the-code-91c2"}, "state": {state}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := newFake(t)
			rt := f.start()
			flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
			is.NoErr(err)                                                                          // started
			is.NoErr(flow.SubmitRedirect(ctxFor(t), landing(t, flow, tc.query(stateOf(t, flow))))) // delivered
			settled(t, flow.Done(), "the login")
			is.Equal(hub.KindOf(flow.Err()), hub.Invalid)                        // failed
			noSecret(t, "not-the-code-91c2", flow.Err().Error(), f.log.String()) // without repeating what was sent back
			is.Equal(f.auth(), "")                                               // nothing saved
		})
	}
}

func TestACancelledBrowserLoginStopsCodexsListener(t *testing.T) {
	is := is.New(t)
	f := newFake(t)
	rt := f.start()
	flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.NoErr(err) // started
	wrong := landing(t, flow, url.Values{"code": {"fake-code"}, "state": {"another-state"}})
	is.NoErr(flow.SubmitRedirect(ctxFor(t), wrong)) // delivered: the listener answers a wrong state
	select {
	case <-flow.Done():
		t.Fatal("a wrong state settled the login")
	default: // codex keeps waiting, as it does
	}
	flow.Cancel()
	flow.Cancel() // idempotent
	settled(t, flow.Done(), "the login")
	is.Equal(hub.MessageOf(flow.Err()), "The login was cancelled.") // cancelled
	codex.WaitBackground(rt)
	is.True(slices.Contains(f.recorded("call"), "account/login/cancel")) // codex was told
	err = driver.Deliver(ctxFor(t), flow.Challenge().Callback)
	is.True(err != nil) // and its listener is gone
}

func TestADeviceLoginShowsTheCodeAndCompletesWhenApproved(t *testing.T) {
	for _, tc := range []struct {
		name     string
		signal   syscall.Signal
		complete bool
	}{
		{"approved", syscall.SIGUSR1, true},
		{"denied", syscall.SIGUSR2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := newFake(t)
			rt := f.start()
			flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt-device"))
			is.NoErr(err) // started
			ch := flow.Challenge()
			is.Equal(ch.URL, "https://auth.openai.com/codex/device")                                  // OpenAI's device page
			is.Equal(ch.Completion, hub.CompletionDevice)                                             // finished there
			is.Equal(len(ch.UserCode), len("ABCD-EFGH"))                                              // with the code shown
			is.Equal(ch.Callback, "")                                                                 // nothing to paste
			is.Equal(hub.KindOf(flow.SubmitRedirect(ctxFor(t), "http://127.0.0.1:1/x")), hub.Invalid) // no address taken
			is.NoErr(syscall.Kill(codex.PID(rt), tc.signal))                                          // the person approves, or denies
			settled(t, flow.Done(), "the login")
			is.Equal(flow.Err() == nil, tc.complete)                                    // the outcome
			is.Equal(strings.Contains(f.auth(), `"auth_mode": "chatgpt"`), tc.complete) // saved only when approved
		})
	}
}

func TestADeviceLoginCodexCannotStartIsUnavailable(t *testing.T) {
	is := is.New(t)
	rt := newFake(t, "CODEXSERVER_DEVICE=offline").start()
	_, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt-device"))
	is.Equal(hub.KindOf(err), hub.Unavailable)                        // codex failed
	is.True(!strings.Contains(hub.MessageOf(err), "auth.openai.com")) // said in the driver's words
}

func TestANewLoginReplacesThePendingOne(t *testing.T) {
	is := is.New(t)
	rt := newFake(t).start()
	first, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.NoErr(err) // the first
	second, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt-device"))
	is.NoErr(err) // the second
	settled(t, first.Done(), "the first login")
	is.Equal(hub.KindOf(first.Err()), hub.Invalid) // codex abandoned the first
	select {
	case <-second.Done():
		t.Fatal("the second login settled")
	default: // the second waits
	}
}

func TestLoginsCodexDoesNotOfferAreRefusedBeforeReachingIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   hub.AgentLoginStart
		field string
	}{
		{"another target", hub.AgentLoginStart{Target: "google", Method: "chatgpt"}, "target"},
		{"the key method", hub.AgentLoginStart{Target: "openai", Method: "api-key"}, "method"},
		{"answers", hub.AgentLoginStart{Target: "openai", Method: "chatgpt", Answers: map[string]string{"a": "b"}}, "answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := newFake(t)
			rt := f.start()
			_, err := rt.Login(ctxFor(t), tc.req)
			var e *hub.Error
			is.True(asError(err, &e))                                                               // refused
			is.Equal(e.Kind, hub.Invalid)                                                           // as invalid
			is.Equal(e.Details.Field, tc.field)                                                     // naming the input
			is.Equal(handledSoFar(t, f, rt), []string{"initialize", "initialized", "account/read"}) // codex was not asked
		})
	}
}

func TestAnAuthorizeAddressThatIsNoWebPageIsRefusedAndTheLoginCancelled(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_AUTH_BASE=javascript:alert(1)//")
	rt := f.start()
	_, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.Equal(hub.KindOf(err), hub.Unavailable) // not handed to a person
	codex.WaitBackground(rt)
	is.True(slices.Contains(f.recorded("call"), "account/login/cancel")) // and codex told to stop listening
}

func TestACodeIsNeverTakenForCodexsLoginsFinishOtherwise(t *testing.T) {
	is := is.New(t)
	rt := newFake(t).start()
	flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.NoErr(err) // started
	var e *hub.Error
	is.True(asError(flow.SubmitCode(ctxFor(t), "123456"), &e)) // refused
	is.Equal(e.Details.Field, "code")                          // naming the code
}

func TestAChatGPTLoginOpenAICannotConfirmShowsAndLogsOut(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_ROUTING=offline") // account/read fails as codex's does offline
	rt := f.start()
	flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt-device"))
	is.NoErr(err) // started
	is.NoErr(syscall.Kill(codex.PID(rt), syscall.SIGUSR1))
	settled(t, flow.Done(), "the login")
	is.NoErr(flow.Err()) // logged in
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                                                   // still a status
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "subscription", Provider: "openai"})       // a subscription, details unknown
	is.Equal(len(st.Targets[0].Credentials), 1)                                                     // one credential
	is.Equal(st.Targets[0].Credentials[0].ID, "chatgpt")                                            // ChatGPT's
	is.True(st.Targets[0].Credentials[0].Removable)                                                 // which can be removed
	is.NoErr(rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: "openai", Credential: "chatgpt"})) // and is
	is.Equal(f.auth(), "")                                                                          // gone from auth.json
}
