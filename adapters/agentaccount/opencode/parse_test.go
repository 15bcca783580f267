package opencode

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// A provider of OpenCode 1.18.33's catalog, as GET /provider lists it: a
// key taken from the environment travels in it.
const catalogProvider = `{"id":"anthropic","name":"Anthropic","source":"env","env":["ANTHROPIC_API_KEY"],
"key":"sk-ant-SECRET","options":{"headers":{"anthropic-beta":"x"}},
"models":{"claude":{"id":"claude","cost":{"input":3,"cache":{"read":0.3}},"limit":{"context":200000},"variants":{}}}}`

func TestTheCatalogKeepsIdsNamesSourcesAndKeyVariablesOnly(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		providers []provider
		connected []string
	}{
		{"the catalog", `{"all":[` + catalogProvider + `],"default":{"anthropic":"claude"},"connected":["anthropic"]}`,
			[]provider{{ID: "anthropic", Name: "Anthropic", Source: "env", Env: []string{"ANTHROPIC_API_KEY"}}}, []string{"anthropic"}},
		{"the connected providers", `{"providers":[` + catalogProvider + `],"default":{}}`,
			[]provider{{ID: "anthropic", Name: "Anthropic", Source: "env", Env: []string{"ANTHROPIC_API_KEY"}}}, nil},
		{"a repeated id, an invalid id and a provider that is no object", `{"all":[{"id":"a","name":"A"},{"id":"a","name":"B"},{"id":"a/b"},{"id":""},7,{"id":"c","env":["OK_KEY","bad name",3]}]}`,
			[]provider{{ID: "a", Name: "A"}, {ID: "c", Env: []string{"OK_KEY"}}}, nil},
		{"members of other types", `{"all":{"id":"x"},"connected":"x"}`, nil, nil},
		{"a name with control characters", `{"all":[{"id":"n","name":"Bad\u0007\nName ","env":"X"}]}`,
			[]provider{{ID: "n", Name: "Bad  Name"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			c, err := parseCatalog(strings.NewReader(tt.in), maxCatalog)
			is.NoErr(err)                       // it parses
			is.Equal(c.Providers, tt.providers) // to the providers, without models or keys
			is.Equal(c.Connected, tt.connected) // and the connected ids
			for _, p := range tt.providers {
				got, ok := c.find(p.ID)
				is.True(ok)      // each is found by id
				is.Equal(got, p) // as listed
			}
		})
	}
}

func TestACatalogThatIsNotOneIsRefused(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"all":[}`, `{"all":[]} {}`, `{"all":[{"id":"a"`} {
		t.Run(in, func(t *testing.T) {
			is := is.New(t)
			_, err := parseCatalog(strings.NewReader(in), maxCatalog)
			is.True(err != nil) // refused
		})
	}
}

// endless yields a catalog that never ends: providers with models.
type endless struct {
	started bool
	rest    string // what is left of the piece being written
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if e.rest == "" {
			e.rest = `{"id":"p","models":{"m":{"cost":[1,2,3]}}},`
			if !e.started {
				e.rest, e.started = `{"all":[`, true
			}
		}
		c := copy(p[n:], e.rest)
		e.rest = e.rest[c:]
		n += c
	}
	return n, nil
}

func TestACatalogOverItsBoundIsRefusedAsTooLarge(t *testing.T) {
	is := is.New(t)
	_, err := parseCatalog(&endless{}, 1<<20)
	is.True(errors.Is(err, errTooLarge)) // the bound stops it
}

func TestTheStoreKeepsTheLoginsOpenCodeAcceptsAndNoSecret(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []savedLogin
		err  error
	}{
		{"every type", `{"openai":{"type":"oauth","refresh":"r-SECRET","access":"a-SECRET","expires":1,"accountId":"x"},
			"anthropic":{"type":"api","key":"sk-SECRET"},"corp":{"type":"wellknown","key":"K","token":"t-SECRET"}}`,
			[]savedLogin{{"anthropic", "api"}, {"corp", "wellknown"}, {"openai", "oauth"}}, nil},
		{"entries OpenCode's schema refuses", `{"a":{"type":"api"},"b":{"type":"oauth","refresh":"r","access":"a","expires":"1"},
			"c":{"type":"magic","key":"k"},"d":"api","e":{"type":"api","key":7},"f/g":{"type":"api","key":"k"}}`, nil, nil},
		{"a repeated provider: the last wins", `{"a":{"type":"api","key":"1"},"a":{"type":"oauth","refresh":"r","access":"a","expires":2}}`,
			[]savedLogin{{"a", "oauth"}}, nil},
		{"JSON that is no object", `["a"]`, nil, nil},
		{"no JSON", `{"a":`, nil, errNotJSON},
		{"trailing text", `{} x`, nil, errNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			got, err := parseStore(strings.NewReader(tt.in), maxStore)
			is.True(errors.Is(err, tt.err) || err == tt.err) // the expected outcome
			is.Equal(got, tt.want)                           // the logins, ids and types only
		})
	}
	t.Run("over the bound", func(t *testing.T) {
		is := is.New(t)
		_, err := parseStore(strings.NewReader(`{"a":{"type":"api","key":"`+strings.Repeat("k", 100)+`"}}`), 64)
		is.True(errors.Is(err, errTooLarge)) // refused as too large
	})
}

func TestTheProviderAuthAnswerOfOpenCodeBecomesMethodsWithFieldsAndConditions(t *testing.T) {
	is := is.New(t)
	data, err := os.ReadFile("testdata/provider-auth-1.18.33.json") // recorded from `opencode serve` 1.18.33, offline
	is.NoErr(err)
	got, err := parseProviderAuth(data)
	is.NoErr(err)          // it parses
	is.Equal(len(got), 10) // every provider with an auth plugin
	is.Equal(got["openai"], []hub.AgentLoginMethod{
		{ID: "0", Kind: hub.AgentMethodOAuth, Label: "ChatGPT Pro/Plus (browser)", Fields: []hub.AgentLoginField{}},
		{ID: "1", Kind: hub.AgentMethodOAuth, Label: "ChatGPT Pro/Plus (headless)", Fields: []hub.AgentLoginField{}},
		{ID: "2", Kind: hub.AgentMethodKey, Label: "Manually enter API Key", Fields: []hub.AgentLoginField{}},
	}) // each method, numbered as OpenCode numbers them
	is.Equal(got["github-copilot"][0].Fields, []hub.AgentLoginField{
		{Key: "deploymentType", Label: "Select GitHub deployment type", Kind: "select", ValueType: "string", Required: true,
			Options: []hub.AgentFieldOption{{Value: "github.com", Label: "GitHub.com", Hint: "Public"},
				{Value: "enterprise", Label: "GitHub Enterprise", Hint: "Data residency or self-hosted"}}},
		{Key: "enterpriseUrl", Label: "Enter your GitHub Enterprise URL or domain", Kind: "text", ValueType: "string", Required: true,
			Placeholder: "company.ghe.com or https://company.ghe.com",
			When:        []hub.AgentFieldCondition{{Key: "deploymentType", Op: "eq", Value: "enterprise"}}},
	}) // a select, and a text asked only on a condition
	role := got["snowflake-cortex"][0].Fields[1]
	is.Equal(role.Key, "role")
	is.True(!role.Required) // "Snowflake Role (optional)" says it is optional
}

func TestAProviderAuthMethodTheDriverCannotRepresentIsLeftOutKeepingTheOthersNumbers(t *testing.T) {
	is := is.New(t)
	got, err := parseProviderAuth([]byte(`{"p":[
		{"type":"device","label":"Unknown type"},
		{"type":"oauth","label":"Bad condition","prompts":[{"type":"text","key":"k","message":"M","when":{"key":"x","op":"gt","value":"1"}}]},
		{"type":"oauth","label":"Empty select","prompts":[{"type":"select","key":"k","message":"M","options":[]}]},
		{"type":"oauth","label":"Repeated key","prompts":[{"type":"text","key":"k","message":"M"},{"type":"text","key":"k","message":"N"}]},
		{"type":"oauth","label":"When as a list","prompts":[{"type":"text","key":"k","message":"M","when":[{"key":"x","op":"eq","value":"1"}]}]},
		{"type":"api","label":"Good"}],
		"q":"not a list","r":[{"type":"api","label":""}],"bad id":[{"type":"api","label":"x"}]}`))
	is.NoErr(err)                                                                                                                   // the answer parses
	is.Equal(len(got), 1)                                                                                                           // only p has a method left
	is.Equal(got["p"], []hub.AgentLoginMethod{{ID: "5", Kind: hub.AgentMethodKey, Label: "Good", Fields: []hub.AgentLoginField{}}}) // with its own number
	for _, in := range []string{`[]`, `null`, `"x"`, `{`} {
		_, err := parseProviderAuth([]byte(in))
		is.True(err != nil) // an answer that is no object is refused
	}
}

func TestAnswersAreCheckedAsOpenCodeAsksThem(t *testing.T) {
	fields := []hub.AgentLoginField{
		{Key: "kind", Label: "Kind", Kind: "select", Required: true, Options: []hub.AgentFieldOption{{Value: "cloud"}, {Value: "self"}}},
		{Key: "url", Label: "URL", Kind: "text", Required: true, When: []hub.AgentFieldCondition{{Key: "kind", Op: "eq", Value: "self"}}},
		{Key: "note", Label: "Note (optional)", Kind: "text", When: []hub.AgentFieldCondition{{Key: "kind", Op: "neq", Value: "self"}}},
	}
	tests := []struct {
		name    string
		answers map[string]string
		want    map[string]string
		field   string
	}{
		{"a condition that holds asks its field", map[string]string{"kind": "self", "url": "https://x"}, map[string]string{"kind": "self", "url": "https://x"}, ""},
		{"a condition that does not hold drops its answer", map[string]string{"kind": "cloud", "url": "https://x", "note": "n"}, map[string]string{"kind": "cloud", "note": "n"}, ""},
		{"an optional field may be left out", map[string]string{"kind": "cloud"}, map[string]string{"kind": "cloud"}, ""},
		{"a required field must be answered", map[string]string{"kind": "self"}, nil, "url"},
		{"a select takes only its choices", map[string]string{"kind": "other"}, nil, "kind"},
		{"a select must be answered", map[string]string{}, nil, "kind"},
		{"an answer to nothing asked is refused", map[string]string{"kind": "cloud", "secret": "sk-1"}, nil, "answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			got, err := checkAnswers(fields, tt.answers)
			if tt.field == "" {
				is.NoErr(err)          // accepted
				is.Equal(got, tt.want) // the answers to send
				return
			}
			var e *hub.Error
			is.True(errors.As(err, &e))                   // refused
			is.Equal(e.Kind, hub.Invalid)                 // as invalid
			is.Equal(e.Details.Field, tt.field)           // naming the field
			is.True(!strings.Contains(e.Message, "sk-1")) // never repeating an answer
		})
	}
}
