package opencode_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestAKeyLoginLandsInTheStoreAndLogoutRemovesOnlyIt(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture)
	rt := start(t, h)
	is.NoErr(rt.LoginWithKey(ctx(t), hub.AgentKeyLogin{Agent: "opencode", Target: "anthropic", Method: "0", Key: "sk-ant-NEW"})) // saved
	is.Equal(h.store(t)["anthropic"], map[string]any{"type": "api", "key": "sk-ant-NEW"})                                        // in OpenCode's store, as OpenCode saves it
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	anthropic, _ := target(st, "anthropic")
	is.Equal(anthropic.Credentials, []hub.AgentCredential{{ID: "anthropic", Kind: hub.AgentCredentialKey, Label: "API key", Active: true, Removable: true}}) // the status shows it

	is.NoErr(rt.Logout(ctx(t), hub.AgentCredentialRef{Agent: "opencode", Target: "anthropic", Credential: "anthropic"})) // removed
	store := h.store(t)
	is.True(store["anthropic"] == nil) // gone from the store
	is.True(store["zeta"] != nil)      // the other logins stay
	is.True(store["fakecode"] != nil)
	st, err = rt.Status(ctx(t))
	is.NoErr(err)
	anthropic, _ = target(st, "anthropic")
	is.True(!anthropic.Connected)                          // and the status says so
	is.True(!strings.Contains(rt.logs.String(), "sk-ant")) // the key was never logged
}

func TestAKeyMethodsAnswersAreSavedWithTheKey(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	rt := start(t, h)
	is.NoErr(rt.LoginWithKey(ctx(t), hub.AgentKeyLogin{Agent: "opencode", Target: "fakeloop", Method: "1", Key: "k-1",
		Answers: map[string]string{"accountId": "1234"}})) // saved
	is.Equal(h.store(t)["fakeloop"], map[string]any{"type": "api", "key": "k-1", "metadata": map[string]any{"accountId": "1234"}}) // with its answers as metadata
}

func TestAKeyLoginIsRefusedWhenItCannotBeRight(t *testing.T) {
	tests := []struct {
		name   string
		req    hub.AgentKeyLogin
		refuse bool // the server refuses every key
		field  string
	}{
		{"a provider OpenCode does not know", hub.AgentKeyLogin{Target: "nope", Method: "0", Key: "k"}, false, "target"},
		{"a method the provider does not have", hub.AgentKeyLogin{Target: "zeta", Method: "9", Key: "k"}, false, "method"},
		{"a browser login's method", hub.AgentKeyLogin{Target: "fakecode", Method: "0", Key: "k"}, false, "method"},
		{"the environment method", hub.AgentKeyLogin{Target: "zeta", Method: "env", Key: "k"}, false, "method"},
		{"a question left unanswered", hub.AgentKeyLogin{Target: "fakeloop", Method: "1", Key: "k"}, false, "accountId"},
		{"an answer to no question", hub.AgentKeyLogin{Target: "zeta", Method: "0", Key: "k", Answers: map[string]string{"x": "y"}}, false, "answers"},
		{"an empty key", hub.AgentKeyLogin{Target: "zeta", Method: "0"}, false, "key"},
		{"OpenCode's refusal", hub.AgentKeyLogin{Target: "zeta", Method: "0", Key: "sk-REFUSED-KEY"}, true, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			h := newHome(t)
			if tt.refuse {
				h.env = append(h.env, "FAKE_OPENCODESERVE_REFUSE_AUTH=1")
			}
			rt := start(t, h)
			tt.req.Agent = "opencode"
			err := rt.LoginWithKey(ctx(t), tt.req)
			is.Equal(hub.KindOf(err), hub.Invalid)                  // refused as invalid
			is.Equal(field(err), tt.field)                          // naming the input
			is.Equal(len(h.store(t)), 0)                            // nothing saved
			is.True(!strings.Contains(err.Error(), "REFUSED-KEY"))  // never repeating the key, though OpenCode's answer does
			is.True(!strings.Contains(rt.logs.String(), "REFUSED")) // nor logging it
		})
	}
}

func TestALogoutIsRefusedForWhatTheHubCannotRemove(t *testing.T) {
	h := newHome(t, "ANTHROPIC_API_KEY=sk-ant-ENV")
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture)
	h.writeFile(t, ".config/opencode/opencode.json", configFixture)
	rt := start(t, h)
	tests := []struct {
		name string
		ref  hub.AgentCredentialRef
	}{
		{"a key from the environment", hub.AgentCredentialRef{Target: "anthropic", Credential: "env"}},
		{"a key of the configuration", hub.AgentCredentialRef{Target: "openai", Credential: "config"}},
		{"a connection OpenCode makes itself", hub.AgentCredentialRef{Target: "opencode", Credential: "other"}},
		{"a login there is not", hub.AgentCredentialRef{Target: "openai", Credential: "openai"}},
		{"another provider's login", hub.AgentCredentialRef{Target: "openai", Credential: "zeta"}},
		{"a login OpenCode's schema refuses", hub.AgentCredentialRef{Target: "fakeloop", Credential: "fakeloop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			tt.ref.Agent = "opencode"
			err := rt.Logout(ctx(t), tt.ref)
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
			is.Equal(field(err), "credential")     // naming the credential
			is.Equal(len(h.store(t)), 3)           // the store untouched
		})
	}
}

func TestActivateIsRefusedForOpenCodeKeepsOneLoginPerProvider(t *testing.T) {
	is := is.New(t)
	h := newHome(t)
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture)
	rt := start(t, h)
	err := rt.Activate(ctx(t), hub.AgentCredentialRef{Agent: "opencode", Target: "zeta", Credential: "zeta"})
	is.Equal(hub.KindOf(err), hub.Invalid) // refused
}

func TestAfterALogoutTheServerNoLongerCountsTheLogin(t *testing.T) {
	// OpenCode caches its providers from its first request: a browser
	// login gives fakecode a loader of its own ("custom"), which the
	// cache would keep reporting after the logout unless refreshed.
	is := is.New(t)
	h := newHome(t)
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture)
	rt := start(t, h)
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	fakecode, _ := target(st, "fakecode")
	is.True(fakecode.Connected) // logged in
	is.NoErr(rt.Logout(ctx(t), hub.AgentCredentialRef{Agent: "opencode", Target: "fakecode", Credential: "fakecode"}))
	st, err = rt.Status(ctx(t))
	is.NoErr(err)
	fakecode, _ = target(st, "fakecode")
	is.Equal(fakecode.Credentials, []hub.AgentCredential{}) // no login left, not even a stale one
}
