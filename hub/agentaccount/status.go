package agentaccount

import (
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// normalize makes a driver's status safe to list as it is: every list
// present (never null), every field's kind and value type named, and a
// credential kind outside the vocabulary read as "other". The listing
// is then closed whatever a driver left out.
func normalize(st hub.AgentLoginStatus) hub.AgentLoginStatus {
	st.Targets = slices.Clone(st.Targets)
	if st.Targets == nil {
		st.Targets = []hub.AgentLoginTarget{}
	}
	for i := range st.Targets {
		t := &st.Targets[i]
		t.Credentials = slices.Clone(t.Credentials)
		if t.Credentials == nil {
			t.Credentials = []hub.AgentCredential{}
		}
		for j := range t.Credentials {
			c := &t.Credentials[j]
			switch c.Kind {
			case hub.AgentCredentialKey, hub.AgentCredentialOAuth, hub.AgentCredentialSaved,
				hub.AgentCredentialEnv, hub.AgentCredentialConfig, hub.AgentCredentialOther:
			default:
				c.Kind = hub.AgentCredentialOther
			}
		}
		t.Methods = slices.Clone(t.Methods)
		if t.Methods == nil {
			t.Methods = []hub.AgentLoginMethod{}
		}
		for j := range t.Methods {
			m := &t.Methods[j]
			m.Fields = slices.Clone(m.Fields)
			for k := range m.Fields {
				f := &m.Fields[k]
				if f.Kind != "select" {
					f.Kind = "text"
				}
				switch f.ValueType {
				case "string", "number", "boolean", "list":
				default:
					f.ValueType = "string"
				}
			}
		}
	}
	return st
}
