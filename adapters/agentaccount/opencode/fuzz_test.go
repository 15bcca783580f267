package opencode

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// FuzzParseProviderAuth: whatever the server answers, the methods are
// well formed: numbered by their place, of a known kind, with bounded
// printable labels and fields whose conditions are stated.
func FuzzParseProviderAuth(f *testing.F) {
	if data, err := os.ReadFile("testdata/provider-auth-1.18.33.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"p":[{"type":"oauth","label":"L","prompts":[{"type":"select","key":"k","message":"M","options":[{"label":"a","value":"a"}]},{"type":"text","key":"t","message":"T","when":{"key":"k","op":"neq","value":"a"}}]}]}`))
	f.Add([]byte(`{"p":[null,{"type":"api","label":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseProviderAuth(data)
		if err != nil {
			return
		}
		for id, methods := range got {
			if !validID(id) || len(methods) == 0 || len(methods) > maxMethods {
				t.Fatalf("provider %q with %d methods", id, len(methods))
			}
			for _, m := range methods {
				if n, err := strconv.Atoi(m.ID); err != nil || n < 0 || n >= maxMethods {
					t.Fatalf("method id %q", m.ID)
				}
				if m.Kind != hub.AgentMethodKey && m.Kind != hub.AgentMethodOAuth || !shown(m.Label, maxLabel) || m.Fields == nil {
					t.Fatalf("method %+v", m)
				}
				for _, f := range m.Fields {
					if !validID(f.Key) || !shown(f.Label, maxLabel) || (f.Kind == "select") != (len(f.Options) > 0) || len(f.When) > 1 {
						t.Fatalf("field %+v", f)
					}
					for _, c := range f.When {
						if c.Op != "eq" && c.Op != "neq" {
							t.Fatalf("condition %+v", c)
						}
					}
				}
			}
		}
	})
}

// shown reports whether s is fit to show: nonempty, valid, bounded, on
// one line.
func shown(s string, max int) bool {
	return s != "" && len(s) <= max && utf8.ValidString(s) && !strings.ContainsAny(s, "\n\r\x00")
}

// FuzzParseCatalog: a catalog answer parses to unique valid ids within
// the bounds, or is refused.
func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(`{"all":[` + catalogProvider + `],"default":{},"connected":["anthropic"]}`))
	f.Add([]byte(`{"providers":[{"id":"a","env":["A_KEY"]},{"id":"a"}],"default":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCatalog(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for i, p := range c.Providers {
			if !validID(p.ID) || seen[p.ID] || len(p.Env) > maxEnvNames || len(p.Name) > maxLabel || c.byID[p.ID] != i {
				t.Fatalf("provider %+v", p)
			}
			seen[p.ID] = true
			for _, e := range p.Env {
				if !validEnvName(e) {
					t.Fatalf("variable %q", e)
				}
			}
		}
	})
}

// FuzzParseStore: a store yields sorted unique valid ids of known types,
// or is refused.
func FuzzParseStore(f *testing.F) {
	f.Add([]byte(`{"a":{"type":"api","key":"k"},"b":{"type":"oauth","refresh":"r","access":"a","expires":1}}`))
	f.Add([]byte(`{"a":{"type":"wellknown","key":"k","token":"t"},"a":{"type":"api"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		logins, err := parseStore(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		for i, l := range logins {
			if !validID(l.Provider) || (l.Type != "api" && l.Type != "oauth" && l.Type != "wellknown") ||
				i > 0 && logins[i-1].Provider >= l.Provider {
				t.Fatalf("logins %+v", logins)
			}
		}
	})
}
