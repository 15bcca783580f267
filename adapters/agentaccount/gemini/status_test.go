package gemini

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestTheStatusNamesGeminiCLIsLogins(t *testing.T) {
	for _, c := range []struct {
		name      string
		v         view
		connected bool
		logout    bool
		creds     string // id:active:removable, …
	}{
		{"logged out", view{}, false, false, ""},
		{"a Google login selected", view{google: true, email: "a@b.c", selected: "oauth-personal"}, true, true, "oauth-personal:true:true"},
		{"a Google login not selected", view{google: true}, true, true, "oauth-personal:false:true"},
		{"a Google login by the environment's switch", view{google: true, env: []string{"GOOGLE_GENAI_USE_GCA=true"}}, true, true, "oauth-personal:true:true"},
		{"an environment key", view{env: []string{"GEMINI_API_KEY=k"}}, true, false, "env:GEMINI_API_KEY:true:false"},
		{"an environment key beside a selected Google login", view{google: true, selected: "oauth-personal", env: []string{"GEMINI_API_KEY=k"}}, true, true,
			"oauth-personal:true:true,env:GEMINI_API_KEY:false:false"},
		{"a key Gemini CLI saved", view{selected: "gemini-api-key"}, true, false, "saved-api-key:true:false"},
		{"Vertex AI", view{env: []string{"GOOGLE_GENAI_USE_VERTEXAI=true", "GOOGLE_CLOUD_PROJECT=p"}}, true, false, "env:vertex-ai:true:false"},
		{"the machine's cloud credentials", view{env: []string{"GEMINI_CLI_USE_COMPUTE_ADC=true"}}, true, false, "compute-adc:true:false"},
		{"a gateway", view{env: []string{"GOOGLE_GEMINI_BASE_URL=https://g.example"}}, true, false, "env:gateway:true:false"},
		{"an encrypted Google login", view{google: true, env: []string{"GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true"}}, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			st := statusOf(c.v, "0.61.0")
			is.Equal(st.Version, "0.61.0")                       // the version
			is.Equal(st.Account, (*hub.AgentVendorAccount)(nil)) // no vendor account
			is.Equal(len(st.Targets), 1)                         // one target
			tg := st.Targets[0]
			is.Equal(tg.ID, "google")                  // Google's
			is.Equal(tg.Connected, c.connected)        // connected when it has a login
			is.Equal(st.Capabilities.Logout, c.logout) // which logout can remove when in the store
			var creds []string
			for _, cr := range tg.Credentials {
				creds = append(creds, cr.ID+":"+boolString(cr.Active)+":"+boolString(cr.Removable))
			}
			is.Equal(strings.Join(creds, ","), c.creds) // the logins
		})
	}
}

func TestTheGoogleLoginIsLabelledWithItsEmail(t *testing.T) {
	is := is.New(t)
	st := statusOf(view{google: true, email: "a@b.c"}, "")
	is.Equal(st.Targets[0].Credentials[0].Label, "Google account a@b.c") // the account's email
}

func TestTheMethodsAreGooglesLoginAndTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     []string
		methods string
		login   bool
	}{
		{"as usual", nil, "oauth-personal:oauth:code,env-gemini-api-key:env:,env-vertex-ai:env:", true},
		{"with the login kept encrypted", []string{"GEMINI_FORCE_ENCRYPTED_FILE_STORAGE=true"}, "command:command:,env-gemini-api-key:env:,env-vertex-ai:env:", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			st := statusOf(view{env: c.env}, "")
			var got []string
			for _, m := range st.Targets[0].Methods {
				got = append(got, m.ID+":"+m.Kind+":"+string(m.Completion))
				is.Equal(m.Fields != nil, m.Kind == hub.AgentMethodOAuth) // a list for a browser login, none for the others
			}
			is.Equal(strings.Join(got, ","), c.methods) // the methods
			is.Equal(st.Capabilities.Login, c.login)    // and whether Wharf can log in
			is.Equal(st.Capabilities.Activate, false)   // never activate
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestTheSelectedTypeIsReadFromSettingsWithComments(t *testing.T) {
	for _, c := range []struct {
		name, settings, want string
	}{
		{"plain", `{"security":{"auth":{"selectedType":"oauth-personal"}}}`, "oauth-personal"},
		{"with comments", "{\n  // the login\n  \"security\": {/* auth */ \"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}", "gemini-api-key"},
		{"with a comment-like string", `{"ui":{"theme":"a//b /* c */"},"security":{"auth":{"selectedType":"vertex-ai"}}}`, "vertex-ai"},
		{"with an escaped quote", `{"x":"\"//","security":{"auth":{"selectedType":"vertex-ai"}}}`, "vertex-ai"},
		{"in the first format", `{"selectedAuthType":"oauth-personal"}`, "oauth-personal"},
		{"none", `{"ui":{}}`, ""},
		{"not JSON", `{"security":`, ""},
		{"a trailing comma", `{"security":{"auth":{"selectedType":"oauth-personal"}},}`, ""},
		{"an unterminated comment", `{"security":{"auth":{"selectedType":"oauth-personal"}}} /* x`, "oauth-personal"},
		{"a control character", `{"selectedAuthType":"a\u0007b"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(selectedType([]byte(c.settings)), c.want) // the selected type
		})
	}
}

func TestALoginIsAnObjectWithAToken(t *testing.T) {
	for _, c := range []struct {
		creds string
		want  bool
	}{
		{`{"access_token":"a","refresh_token":"r","token_type":"Bearer"}`, true},
		{`{"refresh_token":"r"}`, true},
		{`{"access_token":""}`, false},
		{`{}`, false},
		{`[]`, false},
		{`not json`, false},
		{``, false},
	} {
		t.Run(c.creds, func(t *testing.T) {
			is := is.New(t)
			is.Equal(loggedIn([]byte(c.creds)), c.want) // a login or not
		})
	}
}

// FuzzSettings: whatever settings.json holds, the selected type read
// from it is showable, and for JSON without comments it is the one a
// plain parse finds.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(`{"security":{"auth":{"selectedType":"oauth-personal"}}}`))
	f.Add([]byte("{// c\n\"selectedAuthType\":\"x\"/* d */}"))
	f.Add([]byte(`{"a":"\\"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := selectedType(b)
		if len(got) > 256 || strings.IndexFunc(got, unicode.IsControl) >= 0 {
			t.Fatalf("unshowable %q", got)
		}
		if strings.Contains(string(b), "/") {
			return
		}
		var plain struct {
			Security struct {
				Auth struct {
					SelectedType string `json:"selectedType"`
				} `json:"auth"`
			} `json:"security"`
		}
		if json.Unmarshal(b, &plain) == nil && plain.Security.Auth.SelectedType != "" && shown(plain.Security.Auth.SelectedType) != got {
			t.Fatalf("%q read as %q", b, got)
		}
	})
}

// FuzzStoreFiles: whatever oauth_creds.json and google_accounts.json
// hold, reading them never fails, and an email shown is showable.
func FuzzStoreFiles(f *testing.F) {
	f.Add([]byte(`{"access_token":"a","refresh_token":"r"}`), []byte(`{"active":"a@b.c","old":["d@e.f"]}`))
	f.Add([]byte(`[]`), []byte(`{"active":null}`))
	f.Fuzz(func(t *testing.T, creds, accts []byte) {
		_ = loggedIn(creds)
		if e := activeEmail(accts); len(e) > 256 || strings.IndexFunc(e, unicode.IsControl) >= 0 {
			t.Fatalf("unshowable email %q", e)
		}
		if a, ok := parseAccounts(accts); ok && a.Old == nil {
			t.Fatal("old accounts as null")
		}
	})
}
