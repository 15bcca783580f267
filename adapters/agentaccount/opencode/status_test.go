package opencode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// A store with a key, a browser login and an entry OpenCode's schema
// refuses.
const storeFixture = `{
  "zeta": {"type": "api", "key": "sk-zeta-SAVED"},
  "fakecode": {"type": "oauth", "refresh": "r-SAVED", "access": "a-SAVED", "expires": 1},
  "fakeloop": {"type": "oauth", "access": "a-SAVED"}
}`

// A configuration with a key for a catalog provider and a provider of its
// own.
const configFixture = `{"provider": {
  "openai": {"options": {"apiKey": "sk-openai-CONFIG"}},
  "custom-llm": {"name": "Custom LLM", "options": {"apiKey": "sk-custom-CONFIG"}}
}}`

func TestTheStatusListsProvidersWithTheirMethodsAndEveryKindOfLogin(t *testing.T) {
	is := is.New(t)
	h := newHome(t, "ANTHROPIC_API_KEY=sk-ant-ENV")
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture)
	h.writeFile(t, ".config/opencode/opencode.json", configFixture)
	rt := start(t, h)
	st, err := rt.Status(ctx(t))
	is.NoErr(err)                                                                                       // the status reads
	is.Equal(st.Version, "1.18.33")                                                                     // with the server's version
	is.Equal(st.Capabilities, hub.AgentAccountCapabilities{Login: true, Logout: true, Activate: false}) // OpenCode 1.x: one login per provider
	var ids []string
	for _, tg := range st.Targets {
		ids = append(ids, tg.ID)
	}
	is.Equal(ids, []string{"opencode", "openai", "anthropic", "custom-llm", "fakecode", "fakedevice", "fakeloop", "zeta"}) // the popular ones first, then by name

	envMethod := func(v string) hub.AgentLoginMethod {
		return hub.AgentLoginMethod{ID: "env", Kind: hub.AgentMethodEnv, Label: "Set " + v + " where the Hub runs",
			Fields: []hub.AgentLoginField{}, Variables: []string{v}}
	}
	key := hub.AgentLoginMethod{ID: "0", Kind: hub.AgentMethodKey, Label: "API key", Fields: []hub.AgentLoginField{}}
	tests := []struct {
		id      string
		name    string
		creds   []hub.AgentCredential
		methods []hub.AgentLoginMethod
	}{
		{"opencode", "OpenCode Zen", []hub.AgentCredential{{ID: "other", Kind: hub.AgentCredentialOther,
			Label: "Connected by OpenCode itself (built in, or a plugin's own login)", Active: true}},
			[]hub.AgentLoginMethod{key, envMethod("OPENCODE_API_KEY")}},
		{"openai", "OpenAI", []hub.AgentCredential{{ID: "config", Kind: hub.AgentCredentialConfig, Label: "Set in OpenCode's configuration", Active: true}},
			[]hub.AgentLoginMethod{key, envMethod("OPENAI_API_KEY")}},
		{"anthropic", "Anthropic", []hub.AgentCredential{{ID: "env", Kind: hub.AgentCredentialEnv, Label: "Key from the environment (ANTHROPIC_API_KEY)",
			Active: true, Variables: []string{"ANTHROPIC_API_KEY"}}},
			[]hub.AgentLoginMethod{key, envMethod("ANTHROPIC_API_KEY")}},
		{"custom-llm", "Custom LLM", []hub.AgentCredential{{ID: "config", Kind: hub.AgentCredentialConfig, Label: "Set in OpenCode's configuration", Active: true}},
			[]hub.AgentLoginMethod{key}},
		{"fakecode", "Fake Code", []hub.AgentCredential{{ID: "fakecode", Kind: hub.AgentCredentialOAuth, Label: "Browser login", Active: true, Removable: true}},
			[]hub.AgentLoginMethod{
				{ID: "0", Kind: hub.AgentMethodOAuth, Label: "Log in with Fake Code (paste a code)", Fields: []hub.AgentLoginField{}},
				{ID: "1", Kind: hub.AgentMethodKey, Label: "Manually enter API Key", Fields: []hub.AgentLoginField{}},
				envMethod("FAKECODE_API_KEY")}},
		{"fakeloop", "Fake Loopback", []hub.AgentCredential{}, []hub.AgentLoginMethod{
			{ID: "0", Kind: hub.AgentMethodOAuth, Label: "Log in with the browser", Fields: []hub.AgentLoginField{
				{Key: "region", Label: "Select your region", Kind: "select", ValueType: "string", Required: true, Options: []hub.AgentFieldOption{
					{Value: "us", Label: "United States"}, {Value: "eu", Label: "Europe", Hint: "Data stays in the EU"}}},
				{Key: "tenant", Label: "Enter your EU tenant", Kind: "text", ValueType: "string", Required: true, Placeholder: "acme",
					When: []hub.AgentFieldCondition{{Key: "region", Op: "eq", Value: "eu"}}}}},
			{ID: "1", Kind: hub.AgentMethodKey, Label: "Paste a key", Fields: []hub.AgentLoginField{
				{Key: "accountId", Label: "Enter your account ID", Kind: "text", ValueType: "string", Required: true, Placeholder: "e.g. 1234"}}}}},
		{"zeta", "Zeta Cloud", []hub.AgentCredential{{ID: "zeta", Kind: hub.AgentCredentialKey, Label: "API key", Active: true, Removable: true}},
			[]hub.AgentLoginMethod{key, envMethod("ZETA_API_KEY")}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			is := is.New(t)
			tg, ok := target(st, tt.id)
			is.True(ok)                               // listed
			is.Equal(tg.Name, tt.name)                // by its name
			is.Equal(tg.Credentials, tt.creds)        // with its logins
			is.Equal(tg.Connected, len(tt.creds) > 0) // connected when it has one
			is.Equal(tg.Methods, tt.methods)          // and the ways to make one
		})
	}
	data, err := json.Marshal(st)
	is.NoErr(err)
	for _, secret := range []string{"SAVED", "sk-ant-ENV", "CONFIG"} {
		is.True(!strings.Contains(string(data), secret))     // no secret of the store, the environment or the configuration
		is.True(!strings.Contains(rt.logs.String(), secret)) // in the status or the logs
	}
}

func TestTheStatusLeavesOutProvidersWithNothingSetUp(t *testing.T) {
	is := is.New(t)
	rt := start(t, newHome(t))
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	var ids []string
	for _, tg := range st.Targets {
		ids = append(ids, tg.ID)
		is.Equal(tg.Connected, tg.ID == "opencode") // only OpenCode's own is connected
	}
	is.Equal(ids, []string{"opencode", "openai", "anthropic", "fakecode", "fakedevice", "fakeloop"}) // zeta, with no login and no method of its own, is not
}

func TestLoginsFromTheAuthContentVariableCannotBeChangedFromTheHub(t *testing.T) {
	is := is.New(t)
	h := newHome(t, `OPENCODE_AUTH_CONTENT={"zeta":{"type":"api","key":"sk-VAR"}}`)
	h.writeFile(t, ".local/share/opencode/auth.json", storeFixture) // ignored by OpenCode
	rt := start(t, h)
	st, err := rt.Status(ctx(t))
	is.NoErr(err)
	is.Equal(st.Capabilities, hub.AgentAccountCapabilities{}) // no login or logout from the Hub
	zeta, _ := target(st, "zeta")
	is.Equal(zeta.Credentials, []hub.AgentCredential{{ID: "zeta", Kind: hub.AgentCredentialEnv, Label: "API key (from OPENCODE_AUTH_CONTENT)",
		Active: true, Variables: []string{"OPENCODE_AUTH_CONTENT"}}}) // the variable's login
	fakecode, _ := target(st, "fakecode")
	is.Equal(len(fakecode.Credentials), 0) // the file's are not used

	err = rt.LoginWithKey(ctx(t), hub.AgentKeyLogin{Agent: "opencode", Target: "anthropic", Method: "0", Key: "sk-new"})
	is.Equal(hub.KindOf(err), hub.Invalid) // a key login is refused
	err = rt.Logout(ctx(t), hub.AgentCredentialRef{Agent: "opencode", Target: "zeta", Credential: "zeta"})
	is.Equal(hub.KindOf(err), hub.Invalid) // and so is a logout
	is.Equal(field(err), "credential")
	is.True(h.store(t)["anthropic"] == nil) // nothing was written
}
