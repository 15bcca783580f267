package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

const testKey = "sk-test-7f3a9c1e5b2d" // a key only these tests know

func keyLogin(key string) hub.AgentKeyLogin {
	return hub.AgentKeyLogin{Agent: "codex", Target: "openai", Method: "api-key", Key: key}
}

func TestAKeyLoginLandsInCodexsAuthFileAndShowsAsItsCredential(t *testing.T) {
	is := is.New(t)
	f := newFake(t)
	rt := f.start()
	is.NoErr(rt.LoginWithKey(ctxFor(t), keyLogin(testKey))) // codex took the key
	var saved struct {
		Mode string `json:"auth_mode"`
		Key  string `json:"OPENAI_API_KEY"`
	}
	is.NoErr(json.Unmarshal([]byte(f.auth()), &saved)) // auth.json is codex's
	is.Equal(saved, struct {
		Mode string `json:"auth_mode"`
		Key  string `json:"OPENAI_API_KEY"`
	}{"apikey", testKey}) // with the key
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                                        // read
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "api-key", Provider: "openai"}) // an API key login
	is.True(st.Targets[0].Connected)                                                     // connected
	is.Equal(st.Targets[0].Credentials, []hub.AgentCredential{{ID: "apikey", Label: "OpenAI API key",
		Kind: hub.AgentCredentialKey, Active: true, Removable: true}}) // one key, removable
	noSecret(t, testKey, f.log.String()) // the key is not logged
}

func TestAKeyLoginCodexRefusesIsInvalidWithoutTheKey(t *testing.T) {
	is := is.New(t)
	f := newFake(t, "CODEXSERVER_REFUSE_KEYS=1", "CODEXSERVER_ECHO_STDERR=1") // it quotes the key back, and prints it
	rt := f.start()
	err := rt.LoginWithKey(ctxFor(t), keyLogin(testKey))
	is.Equal(hub.KindOf(err), hub.Invalid)                 // a refusal
	is.Equal(hub.MessageOf(err), "Codex refused the key.") // in the driver's words
	var e *hub.Error
	is.True(asError(err, &e) && e.Details != nil && e.Details.Field == "key") // about the key
	noSecret(t, testKey, err.Error(), f.log.String())                         // which neither the error nor the log repeats
	is.Equal(f.auth(), "")                                                    // nothing was saved
}

func TestKeyLoginsCodexShouldNotBeGivenAreRefusedBeforeReachingIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   hub.AgentKeyLogin
		field string
	}{
		{"a blank key", keyLogin("  "), "key"},
		{"a key of two lines", keyLogin(testKey + "\nsecond"), "key"},
		{"another target", hub.AgentKeyLogin{Target: "anthropic", Method: "api-key", Key: testKey}, "target"},
		{"a browser method", hub.AgentKeyLogin{Target: "openai", Method: "chatgpt", Key: testKey}, "method"},
		{"answers", hub.AgentKeyLogin{Target: "openai", Method: "api-key", Key: testKey, Answers: map[string]string{"org": "x"}}, "answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := newFake(t)
			rt := f.start()
			err := rt.LoginWithKey(ctxFor(t), tc.req)
			var e *hub.Error
			is.True(asError(err, &e))                                                               // refused
			is.Equal(e.Kind, hub.Invalid)                                                           // as invalid input
			is.Equal(e.Details.Field, tc.field)                                                     // naming it
			is.Equal(handledSoFar(t, f, rt), []string{"initialize", "initialized", "account/read"}) // without asking codex
			noSecret(t, testKey, err.Error())                                                       // nor repeating the key
		})
	}
}

func TestLogoutRemovesCodexsLoginAndNothingElse(t *testing.T) {
	is := is.New(t)
	f := newFake(t)
	rt := f.start()
	is.NoErr(rt.LoginWithKey(ctxFor(t), keyLogin(testKey))) // logged in
	config := filepath.Join(f.home, "config.toml")
	is.NoErr(os.WriteFile(config, []byte("model = \"o3\"\n"), 0o600))                                              // a setting of codex's beside it
	is.NoErr(rt.Logout(ctxFor(t), hub.AgentCredentialRef{Agent: "codex", Target: "openai", Credential: "apikey"})) // logged out
	is.Equal(f.auth(), "")                                                                                         // auth.json is gone
	_, err := os.Stat(config)
	is.NoErr(err) // the setting is not
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                     // read
	is.True(!st.Targets[0].Connected) // not connected any more
}

func TestLogoutOfALoginCodexDoesNotHoldIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		login bool
		ref   hub.AgentCredentialRef
		field string
	}{
		{"nothing saved", false, hub.AgentCredentialRef{Target: "openai", Credential: "apikey"}, "credential"},
		{"another credential", true, hub.AgentCredentialRef{Target: "openai", Credential: "chatgpt"}, "credential"},
		{"another target", true, hub.AgentCredentialRef{Target: "anthropic", Credential: "apikey"}, "target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := newFake(t)
			rt := f.start()
			if tc.login {
				is.NoErr(rt.LoginWithKey(ctxFor(t), keyLogin(testKey))) // a key is saved
			}
			err := rt.Logout(ctxFor(t), tc.ref)
			var e *hub.Error
			is.True(asError(err, &e))           // refused
			is.Equal(e.Kind, hub.Invalid)       // as invalid
			is.Equal(e.Details.Field, tc.field) // naming the input
			for _, call := range f.recorded("call") {
				is.True(call != "account/logout") // codex was not asked to log out
			}
		})
	}
}

func TestActivateIsRefusedForCodexKeepsOneLogin(t *testing.T) {
	is := is.New(t)
	rt := newFake(t).start()
	err := rt.Activate(ctxFor(t), hub.AgentCredentialRef{Agent: "codex", Target: "openai", Credential: "apikey"})
	is.Equal(hub.KindOf(err), hub.Invalid) // nothing to activate
}
