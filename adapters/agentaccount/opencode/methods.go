package opencode

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// `GET /provider/auth` answers the login methods of the providers that
// have an auth plugin: {providerID: [{type: "oauth"|"api", label,
// prompts?: [{type: "text", key, message, placeholder?, when?} |
// {type: "select", key, message, options: [{label, value, hint?}],
// when?}]}]}, where when is {key, op: "eq"|"neq", value}. A method is
// named by its index in its provider's list: that is what
// /provider/{id}/oauth/authorize and …/callback take. A provider without
// an entry is logged in to with a plain API key (`PUT /auth/{id}`), as
// OpenCode's own clients do.

// Bounds of a provider-auth answer.
const (
	maxAuthAnswer = 1 << 20
	maxMethods    = 32
	maxPrompts    = 32
	maxOptions    = 256
)

// authMethod is one login method of a provider as OpenCode describes it.
type authMethod struct {
	Type    string       `json:"type"`
	Label   string       `json:"label"`
	Prompts []authPrompt `json:"prompts"`
}

// authPrompt is one question a method asks before it starts.
type authPrompt struct {
	Type        string       `json:"type"`
	Key         string       `json:"key"`
	Message     string       `json:"message"`
	Placeholder string       `json:"placeholder"`
	Options     []authOption `json:"options"`
	When        *authWhen    `json:"when"`
}

// authOption is one choice of a select prompt.
type authOption struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Hint  string `json:"hint"`
}

// authWhen is the condition under which a prompt is asked.
type authWhen struct {
	Key   string `json:"key"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

// parseProviderAuth reads a provider-auth answer into each provider's
// methods, as hub methods whose id is the method's index. A method OpenCode
// describes in a way this driver cannot represent faithfully (an unknown
// type or prompt, a condition it cannot state) is left out rather than
// shown wrong; the others keep their indexes. An answer that is not an
// object is an error.
func parseProviderAuth(data []byte) (map[string][]hub.AgentLoginMethod, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, errShape
	}
	out := make(map[string][]hub.AgentLoginMethod, len(raw))
	for id, list := range raw {
		if !validID(id) || len(out) >= maxProviders {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(list, &items) != nil {
			continue
		}
		var methods []hub.AgentLoginMethod
		for i, item := range items {
			if i >= maxMethods {
				break
			}
			var m authMethod
			if json.Unmarshal(item, &m) != nil {
				continue
			}
			if hm, ok := convertMethod(i, m); ok {
				methods = append(methods, hm)
			}
		}
		if len(methods) > 0 {
			out[id] = methods
		}
	}
	return out, nil
}

// convertMethod turns OpenCode's method number i into a hub method.
func convertMethod(i int, m authMethod) (hub.AgentLoginMethod, bool) {
	hm := hub.AgentLoginMethod{ID: strconv.Itoa(i), Label: clean(m.Label, maxLabel, false), Fields: []hub.AgentLoginField{}}
	switch m.Type {
	case "api":
		hm.Kind = hub.AgentMethodKey
	case "oauth":
		hm.Kind = hub.AgentMethodOAuth
	default:
		return hub.AgentLoginMethod{}, false
	}
	if hm.Label == "" || len(m.Prompts) > maxPrompts {
		return hub.AgentLoginMethod{}, false
	}
	keys := map[string]bool{}
	for _, p := range m.Prompts {
		f, ok := convertPrompt(p)
		if !ok || keys[f.Key] {
			return hub.AgentLoginMethod{}, false
		}
		keys[f.Key] = true
		hm.Fields = append(hm.Fields, f)
	}
	return hm, true
}

// convertPrompt turns a prompt into a field. OpenCode's prompts have no
// notion of optional: a select must be answered; a text prompt is
// required unless its own question says it is optional ("Snowflake Role
// (optional)"), which is how OpenCode tells people.
func convertPrompt(p authPrompt) (hub.AgentLoginField, bool) {
	f := hub.AgentLoginField{Key: p.Key, Label: clean(p.Message, maxLabel, false), ValueType: "string",
		Placeholder: clean(p.Placeholder, maxLabel, false)}
	if !validID(f.Key) || f.Label == "" {
		return f, false
	}
	switch p.Type {
	case "text":
		if len(p.Options) > 0 {
			return f, false
		}
		f.Kind = "text"
		f.Required = !strings.Contains(strings.ToLower(f.Label), "optional")
	case "select":
		if len(p.Options) == 0 || len(p.Options) > maxOptions {
			return f, false
		}
		f.Kind, f.Required, f.Placeholder = "select", true, ""
		for _, o := range p.Options {
			if o.Value == "" || len(o.Value) > maxLabel {
				return f, false
			}
			label := clean(o.Label, maxLabel, false)
			if label == "" {
				label = clean(o.Value, maxLabel, false)
			}
			f.Options = append(f.Options, hub.AgentFieldOption{Value: o.Value, Label: label, Hint: clean(o.Hint, maxLabel, false)})
		}
	default:
		return f, false
	}
	if w := p.When; w != nil {
		if !validID(w.Key) || (w.Op != "eq" && w.Op != "neq") || len(w.Value) > maxLabel {
			return f, false
		}
		f.When = []hub.AgentFieldCondition{{Key: w.Key, Op: w.Op, Value: w.Value}}
	}
	return f, true
}
