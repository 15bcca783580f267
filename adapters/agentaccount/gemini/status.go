package gemini

import (
	"strings"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// Gemini CLI's login types (its settings' security.auth.selectedType).
const (
	typeGoogle  = "oauth-personal"
	typeAPIKey  = "gemini-api-key"
	typeVertex  = "vertex-ai"
	typeCompute = "compute-default-credentials"
	typeGateway = "gateway"
)

// The credentials' ids: what Logout names.
const (
	credGoogle  = "oauth-personal"
	credEnvKey  = "env:GEMINI_API_KEY"
	credSaved   = "saved-api-key"
	credVertex  = "env:vertex-ai"
	credCompute = "compute-adc"
	credGateway = "env:gateway"
)

// The methods' ids: what Login names.
const (
	methodGoogle  = "oauth-personal"
	methodEnvKey  = "env-gemini-api-key"
	methodVertex  = "env-vertex-ai"
	methodCommand = "command"
)

// encryptedStorage is the variable that makes Gemini CLI keep its Google
// login encrypted, out of oauth_creds.json: Wharf can then neither see
// nor make one.
const encryptedStorage = "GEMINI_FORCE_ENCRYPTED_FILE_STORAGE"

// notRemovable says why each login outside Gemini CLI's
// oauth_creds.json cannot be logged out.
var notRemovable = map[string]string{
	credEnvKey:  "Gemini CLI reads GEMINI_API_KEY from the Hub's environment: unset it where the Hub runs, then restart the Hub.",
	credSaved:   "Gemini CLI keeps this key in its own key storage: remove it with /auth in `gemini` on the Hub machine.",
	credVertex:  "Gemini CLI reaches Vertex AI by the Hub's environment: change it where the Hub runs.",
	credCompute: "Gemini CLI uses this machine's cloud credentials by the Hub's environment: change it where the Hub runs.",
	credGateway: "Gemini CLI reaches a gateway by the Hub's environment (GOOGLE_GEMINI_BASE_URL): change it where the Hub runs.",
}

// view is what the status is made of: the store's login, its account's
// email and the selected login type, and the runtime's environment
// (read for variable names and switches, never for a value).
type view struct {
	google   bool
	email    string
	selected string
	env      []string
}

// effectiveType is the login type Gemini CLI uses: the settings', else
// the one its environment implies, as Gemini CLI decides it.
func (v view) effectiveType() string {
	if v.selected != "" && v.selected != "cloud-shell" {
		return v.selected
	}
	switch {
	case driver.Getenv(v.env, "GOOGLE_GENAI_USE_GCA") == "true":
		return typeGoogle
	case driver.Getenv(v.env, "GOOGLE_GENAI_USE_VERTEXAI") == "true":
		return typeVertex
	case driver.Getenv(v.env, "GOOGLE_GEMINI_BASE_URL") != "":
		return typeGateway
	case driver.Getenv(v.env, "GEMINI_API_KEY") != "":
		return typeAPIKey
	case driver.Getenv(v.env, "CLOUD_SHELL") == "true" || driver.Getenv(v.env, "GEMINI_CLI_USE_COMPUTE_ADC") == "true":
		return typeCompute
	}
	return ""
}

// statusOf maps the view to the port's status: one Google target whose
// credentials are the Google login of the store and what the
// environment gives; the one the effective login type names is active.
// Gemini CLI has no vendor account: the login's email is in its label.
func statusOf(v view, version string) hub.AgentLoginStatus {
	active := v.effectiveType()
	encrypted := driver.Getenv(v.env, encryptedStorage) == "true"
	creds := []hub.AgentCredential{}
	if v.google && !encrypted {
		label := "Google account"
		if v.email != "" {
			label += " " + v.email
		}
		creds = append(creds, hub.AgentCredential{ID: credGoogle, Label: label, Kind: hub.AgentCredentialOAuth,
			Active: active == typeGoogle, Removable: true})
	}
	if vars := setOf(v.env, "GEMINI_API_KEY"); len(vars) > 0 {
		creds = append(creds, hub.AgentCredential{ID: credEnvKey, Label: "GEMINI_API_KEY", Kind: hub.AgentCredentialEnv,
			Active: active == typeAPIKey, Variables: vars})
	} else if active == typeAPIKey {
		// Selected with no key in the environment: Gemini CLI uses the
		// key its dialog saved in its key storage.
		creds = append(creds, hub.AgentCredential{ID: credSaved, Label: "Gemini API key saved by Gemini CLI",
			Kind: hub.AgentCredentialSaved, Active: true})
	}
	vertex := setOf(v.env, "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS")
	if active == typeVertex || driver.Getenv(v.env, "GOOGLE_GENAI_USE_VERTEXAI") == "true" || driver.Getenv(v.env, "GOOGLE_API_KEY") != "" {
		creds = append(creds, hub.AgentCredential{ID: credVertex, Label: "Vertex AI", Kind: hub.AgentCredentialEnv,
			Active: active == typeVertex, Variables: vertex})
	}
	if active == typeCompute {
		creds = append(creds, hub.AgentCredential{ID: credCompute, Label: "This machine's cloud credentials", Kind: hub.AgentCredentialOther,
			Active: true, Variables: setOf(v.env, "CLOUD_SHELL", "GEMINI_CLI_USE_COMPUTE_ADC")})
	}
	if vars := setOf(v.env, "GOOGLE_GEMINI_BASE_URL"); len(vars) > 0 || active == typeGateway {
		creds = append(creds, hub.AgentCredential{ID: credGateway, Label: "AI API gateway", Kind: hub.AgentCredentialEnv,
			Active: active == typeGateway, Variables: vars})
	}
	methods := []hub.AgentLoginMethod{}
	if encrypted {
		methods = append(methods, hub.AgentLoginMethod{ID: methodCommand, Kind: hub.AgentMethodCommand,
			Label:   "Sign in with Google in `gemini` on the Hub machine (its login is kept encrypted there)",
			Command: loginCommand})
	} else {
		methods = append(methods, hub.AgentLoginMethod{ID: methodGoogle, Kind: hub.AgentMethodOAuth, Label: "Log in with Google",
			Fields: []hub.AgentLoginField{}, Completion: hub.CompletionCode})
	}
	methods = append(methods,
		hub.AgentLoginMethod{ID: methodEnvKey, Kind: hub.AgentMethodEnv, Label: "Gemini API key in the Hub's environment",
			Variables: []string{"GEMINI_API_KEY"}},
		hub.AgentLoginMethod{ID: methodVertex, Kind: hub.AgentMethodEnv, Label: "Vertex AI by the Hub's environment",
			Variables: []string{"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_API_KEY"}})
	return hub.AgentLoginStatus{
		Version:      version,
		Capabilities: hub.AgentAccountCapabilities{Login: !encrypted, Logout: v.google && !encrypted},
		Targets: []hub.AgentLoginTarget{{ID: targetID, Name: targetName, Connected: len(creds) > 0,
			Credentials: creds, Methods: methods}},
	}
}

// versionOf is the version in out ("0.61.0"): "" when it is not one.
func versionOf(out []byte) string {
	f := strings.Fields(string(out))
	if len(f) == 0 || len(f[0]) > 64 {
		return ""
	}
	for _, r := range f[0] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' || r == '+') {
			return ""
		}
	}
	return f[0]
}

// setOf is the names among names that env sets (to anything not empty).
func setOf(env []string, names ...string) []string {
	var set []string
	for _, n := range names {
		if driver.Getenv(env, n) != "" {
			set = append(set, n)
		}
	}
	return set
}
