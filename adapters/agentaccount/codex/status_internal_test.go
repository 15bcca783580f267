package codex

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// The status of each account codex can answer, as account/read's JSON.
func TestEachAccountCodexReportsMapsToOneTargetAndItsLogin(t *testing.T) {
	key := func(id, label string, removable bool) []hub.AgentCredential {
		return []hub.AgentCredential{{ID: id, Label: label, Kind: hub.AgentCredentialKey, Active: true, Removable: removable}}
	}
	for _, tc := range []struct {
		name      string
		answer    string
		account   hub.AgentVendorAccount
		connected bool
		creds     []hub.AgentCredential
	}{
		{"no login", `{"account":null,"requiresOpenaiAuth":true,"workspaceRouting":null}`,
			hub.AgentVendorAccount{Source: "none"}, false, []hub.AgentCredential{}},
		{"a provider that needs no login", `{"account":null,"requiresOpenaiAuth":false}`,
			hub.AgentVendorAccount{Source: "third-party"}, false, []hub.AgentCredential{}},
		{"an API key", `{"account":{"type":"apiKey"},"requiresOpenaiAuth":true}`,
			hub.AgentVendorAccount{Source: "api-key", Provider: "openai"}, true, key("apikey", "OpenAI API key", true)},
		{"a ChatGPT login", `{"account":{"type":"chatgpt","email":"a@b.c","planType":"team","workspaceName":"Acme"},"requiresOpenaiAuth":true}`,
			hub.AgentVendorAccount{Source: "subscription", Email: "a@b.c", Plan: "team", Organization: "Acme", Provider: "openai"}, true,
			[]hub.AgentCredential{{ID: "chatgpt", Label: "ChatGPT (a@b.c)", Kind: hub.AgentCredentialOAuth, Active: true, Removable: true}}},
		{"a ChatGPT login without email or known plan", `{"account":{"type":"chatgpt","email":null,"planType":"unknown"},"requiresOpenaiAuth":true}`,
			hub.AgentVendorAccount{Source: "subscription", Provider: "openai"}, true,
			[]hub.AgentCredential{{ID: "chatgpt", Label: "ChatGPT", Kind: hub.AgentCredentialOAuth, Active: true, Removable: true}}},
		{"a Bedrock key codex keeps", `{"account":{"type":"amazonBedrock","usesCodexManagedCredentials":true},"requiresOpenaiAuth":false}`,
			hub.AgentVendorAccount{Source: "third-party", Provider: "amazon-bedrock"}, true, key("amazonBedrock", "Amazon Bedrock", true)},
		{"AWS's own Bedrock credentials", `{"account":{"type":"amazonBedrock"},"requiresOpenaiAuth":false}`,
			hub.AgentVendorAccount{Source: "third-party", Provider: "amazon-bedrock"}, true,
			[]hub.AgentCredential{{ID: "amazonBedrock", Label: "Amazon Bedrock", Kind: hub.AgentCredentialOther, Active: true}}},
		{"Vertex AI", `{"account":{"type":"gcp"},"requiresOpenaiAuth":false}`,
			hub.AgentVendorAccount{Source: "third-party", Provider: "gcp"}, true,
			[]hub.AgentCredential{{ID: "gcp", Label: "Google Cloud Vertex AI", Kind: hub.AgentCredentialOther, Active: true}}},
		{"a type this driver does not know", `{"account":{"type":"quantumKey"},"requiresOpenaiAuth":true}`,
			hub.AgentVendorAccount{Source: "unknown"}, true,
			[]hub.AgentCredential{{ID: "quantumKey", Label: "Codex login (quantumKey)", Kind: hub.AgentCredentialOther, Active: true}}},
		{"an email that is no one line", `{"account":{"type":"chatgpt","email":"a@b.c\nx","planType":"plus"},"requiresOpenaiAuth":true}`,
			hub.AgentVendorAccount{Source: "subscription", Plan: "plus", Provider: "openai"}, true,
			[]hub.AgentCredential{{ID: "chatgpt", Label: "ChatGPT", Kind: hub.AgentCredentialOAuth, Active: true, Removable: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			a, err := parseAccount([]byte(tc.answer))
			is.NoErr(err) // understood
			st := statusOf("0.166.0", a)
			is.Equal(st.Version, "0.166.0")                                                    // the version
			is.Equal(st.Capabilities, hub.AgentAccountCapabilities{Login: true, Logout: true}) // one login, nothing to activate
			is.Equal(*st.Account, tc.account)                                                  // the vendor account
			is.Equal(len(st.Targets), 1)                                                       // one target
			is.Equal(st.Targets[0].Connected, tc.connected)                                    // connected when logged in
			is.Equal(st.Targets[0].Credentials, tc.creds)                                      // its login
		})
	}
}

func TestAccountAnswersCodexNeverSendsAreNotUnderstood(t *testing.T) {
	for _, answer := range []string{
		`null`, `{}`, `{"account":null}`, `{"account":{},"requiresOpenaiAuth":true}`,
		`{"account":{"type":"api key"},"requiresOpenaiAuth":true}`, `{"account":{"type":""},"requiresOpenaiAuth":true}`,
		`{"account":"apiKey","requiresOpenaiAuth":true}`, `[1]`,
	} {
		t.Run(answer, func(t *testing.T) {
			is := is.New(t)
			_, err := parseAccount([]byte(answer))
			is.Equal(err, errMalformed) // refused
		})
	}
}

func TestTheVersionIsReadFromTheUserAgent(t *testing.T) {
	for _, tc := range []struct{ agent, version string }{
		{"wharf/0.166.0 (Debian 12.0.0; x86_64) unknown (wharf; 1)", "0.166.0"},
		{"wharf/0.0.0-fake (Linux; x86_64)", "0.0.0-fake"},
		{"wharf", ""},
		{"wharf/<script> (x)", ""},
		{"wharf/ (x)", ""},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			is := is.New(t)
			is.Equal(versionOf(tc.agent), tc.version) // the version, or none
		})
	}
}
