package opencode_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/agentaccount"
)

// fakeCode is the code the fake's code login accepts.
const fakeCode = "fake-code-ok"

func TestACodeLoginCompletesWithThePastedCode(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakecode", Method: "0"})
	is.NoErr(err) // started
	ch := f.Challenge()
	is.Equal(ch.Completion, hub.CompletionCode)                                      // finished with a code
	is.True(strings.HasPrefix(ch.URL, "https://fakecode.example/oauth/authorize?"))  // at the provider's page
	is.Equal(ch.Instructions, "Open the page, log in, and paste the code it shows.") // with OpenCode's words
	is.NoErr(f.SubmitCode(ctx(t), fakeCode))                                         // the code is handed over
	is.NoErr(settled(t, f))                                                          // and the login completes
	is.Equal(h.store(t)["fakecode"]["type"], "oauth")                                // into OpenCode's store
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	fakecode, _ := target(st, "fakecode")
	is.True(fakecode.Connected)                            // the status shows it
	is.True(!strings.Contains(rt.logs.String(), fakeCode)) // the code was never logged
}

func TestAWrongCodeFailsTheLoginWithoutRepeatingIt(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakecode", Method: "0"})
	is.NoErr(err)
	is.NoErr(f.SubmitCode(ctx(t), "WRONG-CODE-123")) // handed over
	err = settled(t, f)
	is.Equal(hub.KindOf(err), hub.Invalid)                            // the login failed: the provider refused
	is.Equal(field(err), "code")                                      // the code
	is.True(!strings.Contains(hub.MessageOf(err), "WRONG"))           // without repeating it
	is.True(!strings.Contains(rt.logs.String(), "WRONG"))             // or logging it
	is.Equal(hub.KindOf(f.SubmitCode(ctx(t), fakeCode)), hub.Invalid) // a settled login takes no other code
	is.Equal(len(h.store(t)), 0)                                      // nothing saved
}

// redirectFlow starts the fake's loopback login.
func redirectFlow(t *testing.T, rt *started) (hub.AgentLoginFlow, url.Values) {
	t.Helper()
	is := is.New(t)
	f, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakeloop", Method: "0",
		Answers: map[string]string{"region": "eu", "tenant": "acme"}})
	is.NoErr(err) // started
	u, err := url.Parse(f.Challenge().URL)
	is.NoErr(err)
	return f, u.Query()
}

func TestALoopbackLoginCompletesWhenItsAddressIsDeliveredOnce(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, q := redirectFlow(t, rt)
	ch := f.Challenge()
	is.Equal(ch.Completion, hub.CompletionRedirect) // finished by a redirect to the Hub machine
	is.Equal(q.Get("region"), "eu")                 // the answers reached the plugin
	is.True(strings.HasPrefix(ch.Callback, "http://localhost:"))
	is.True(strings.HasSuffix(ch.Callback, "/auth/callback")) // to its listener
	pasted := "http://127.0.0.1:" + strings.TrimPrefix(strings.TrimSuffix(ch.Callback, "/auth/callback"), "http://localhost:") +
		"/auth/callback?code=abc&state=" + q.Get("state")
	address, err := agentaccount.CheckRedirect(ch.Callback, pasted) // what the core does
	is.NoErr(err)
	is.NoErr(f.SubmitRedirect(ctx(t), address))                                          // delivered
	is.NoErr(settled(t, f))                                                              // the login completes
	is.Equal(h.record("callbacks"), "GET /auth/callback?code=abc&state="+q.Get("state")) // the listener got the address once, query and all
	is.Equal(h.store(t)["fakeloop"]["type"], "oauth")                                    // and the login is saved
	is.True(!strings.Contains(rt.logs.String(), "code=abc"))                             // the address is not logged
}

func TestALoopbackLoginTheProviderRefusesFails(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, _ := redirectFlow(t, rt)
	address, err := agentaccount.CheckRedirect(f.Challenge().Callback, f.Challenge().Callback+"?code=abc&state=forged")
	is.NoErr(err)
	is.NoErr(f.SubmitRedirect(ctx(t), address)) // delivered: the listener answers
	err = settled(t, f)
	is.Equal(hub.KindOf(err), hub.Invalid) // the login fails
	is.Equal(len(h.store(t)), 0)           // nothing saved
}

func TestADeviceLoginShowsItsCodeAndCompletesOnThePage(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakedevice", Method: "0"})
	is.NoErr(err)
	ch := f.Challenge()
	is.Equal(ch.Completion, hub.CompletionDevice)                       // finished on the page
	is.Equal(ch.UserCode, "WXYZ-1234")                                  // with the code its instructions show
	is.Equal(hub.KindOf(f.SubmitCode(ctx(t), "x")), hub.Invalid)        // it takes no code
	is.Equal(hub.KindOf(f.SubmitRedirect(ctx(t), ch.URL)), hub.Invalid) // and no address
	resp, err := http.Get(ch.URL)                                       // the person approves on the page
	is.NoErr(err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	is.NoErr(settled(t, f))                             // the login completes
	is.Equal(h.store(t)["fakedevice"]["type"], "oauth") // saved
}

func TestABrowserLoginIsRefusedWhenItCannotBeRight(t *testing.T) {
	h := newHome(t)
	rt := start(t, h)
	tests := []struct {
		name  string
		req   hub.AgentLoginStart
		field string
	}{
		{"a key method", hub.AgentLoginStart{Target: "fakecode", Method: "1"}, "method"},
		{"a provider without browser logins", hub.AgentLoginStart{Target: "zeta", Method: "0"}, "method"},
		{"a provider OpenCode does not know", hub.AgentLoginStart{Target: "nope", Method: "0"}, "target"},
		{"a choice that is not offered", hub.AgentLoginStart{Target: "fakeloop", Method: "0", Answers: map[string]string{"region": "mars"}}, "region"},
		{"a question its condition asks, unanswered", hub.AgentLoginStart{Target: "fakeloop", Method: "0", Answers: map[string]string{"region": "eu"}}, "tenant"},
		{"an answer the provider's plugin refuses", hub.AgentLoginStart{Target: "fakeloop", Method: "0", Answers: map[string]string{"region": "eu", "tenant": "ACME-SECRETISH"}}, "tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			tt.req.Agent = "opencode"
			f, err := rt.Login(ctx(t), tt.req)
			is.True(f == nil)                                           // no login
			is.Equal(hub.KindOf(err), hub.Invalid)                      // refused as invalid
			is.Equal(field(err), tt.field)                              // naming the input
			is.True(!strings.Contains(hub.MessageOf(err), "SECRETISH")) // never repeating an answer, though the plugin does
		})
	}
}

func TestASubmissionOfTheWrongKindIsRefused(t *testing.T) {
	is := is.New(t)
	rt := start(t, newHome(t))
	code, err := rt.Login(ctx(t), hub.AgentLoginStart{Agent: "opencode", Target: "fakecode", Method: "0"})
	is.NoErr(err)
	err = code.SubmitRedirect(ctx(t), "http://localhost:1/cb?code=x")
	is.Equal(hub.KindOf(err), hub.Invalid) // a code login takes no address
	is.Equal(field(err), "address")
	loop, _ := redirectFlow(t, rt)
	err = loop.SubmitCode(ctx(t), "x")
	is.Equal(hub.KindOf(err), hub.Invalid) // a redirect login takes no code
	is.Equal(field(err), "code")
}

func TestACancelledLoginSettlesAndReachesNoListener(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, _ := redirectFlow(t, rt)
	f.Cancel()
	f.Cancel() // idempotent
	err := settled(t, f)
	is.True(err != nil)                                                                 // settled, not completed
	is.True(strings.Contains(hub.MessageOf(err), "cancelled"))                          // as cancelled
	is.Equal(hub.KindOf(f.SubmitRedirect(ctx(t), f.Challenge().Callback)), hub.Invalid) // it takes nothing more
	is.Equal(h.record("callbacks"), "")                                                 // and nothing reached the listener
}

func TestAKeyLoginWhileABrowserLoginIsPendingKeepsThatLogin(t *testing.T) {
	// The key login changes the store; refreshing the server then would
	// drop the pending browser login, so the refresh waits for it.
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	f, q := redirectFlow(t, rt)
	is.NoErr(rt.LoginWithKey(ctx(t), hub.AgentKeyLogin{Agent: "opencode", Target: "zeta", Method: "0", Key: "k"}))
	address, err := agentaccount.CheckRedirect(f.Challenge().Callback, f.Challenge().Callback+"?code=abc&state="+q.Get("state"))
	is.NoErr(err)
	is.NoErr(f.SubmitRedirect(ctx(t), address))
	is.NoErr(settled(t, f)) // the browser login still completes
	store := h.store(t)
	is.True(store["zeta"] != nil && store["fakeloop"] != nil) // both saved
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	zeta, _ := target(st, "zeta")
	is.True(zeta.Connected) // and the status is current
}
