package opencode

import (
	"context"
	"io"
	"sort"
	"strings"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// Status reads the providers (the catalog, once per runtime), their login
// methods (GET /provider/auth), the connected ones (GET
// /config/providers) and the saved logins (the store, read directly).
// Each call to the server is bounded by readTimeout; it never starts a
// login.
func (r *runtime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	r.instance.RLock()
	defer r.instance.RUnlock()
	v, err := r.view(ctx, true)
	if err != nil {
		return hub.AgentLoginStatus{}, err
	}
	return v.status(), nil
}

// view is what the server and the store say, from which the status and
// the checks of a change are made.
type view struct {
	version   string
	catalog   *catalog
	methods   map[string][]hub.AgentLoginMethod // GET /provider/auth
	connected map[string]provider               // GET /config/providers
	store     store
	env       []string
}

// view reads the server and, when full, what the status alone needs (the
// connected providers, the store). Callers hold r.instance.
func (r *runtime) view(ctx context.Context, full bool) (*view, error) {
	cat, err := r.catalog(ctx)
	if err != nil {
		return nil, err
	}
	a, err := r.client.call(ctx, "GET", "/provider/auth", nil, readTimeout)
	if err != nil {
		return nil, r.failed(err, "OpenCode's login server did not list its login methods.")
	}
	if a.status != 200 {
		return nil, r.failed(statusError("/provider/auth", a), "OpenCode's login server did not list its login methods.")
	}
	methods, err := parseProviderAuth(a.body)
	if err != nil {
		return nil, r.failed(err, "OpenCode's login server listed its login methods in a form the Hub does not know.")
	}
	v := &view{version: r.version, catalog: cat, methods: methods, connected: map[string]provider{}, env: r.d.opts.Env}
	if !full {
		return v, nil
	}
	err = r.client.stream(ctx, "GET", "/config/providers", nil, readTimeout, func(status int, body io.Reader) error {
		if status != 200 {
			return statusError("/config/providers", answer{status: status})
		}
		c, err := parseCatalog(body, maxCatalog)
		for _, p := range c.Providers {
			v.connected[p.ID] = p
		}
		return err
	})
	if err != nil {
		return nil, r.failed(err, "OpenCode's login server did not list its connected providers.")
	}
	if v.store, err = readStore(r.d.opts.Env); err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "The Hub could not read OpenCode's saved logins.")
	}
	return v, nil
}

// popular are the providers OpenCode's own provider dialog puts first, in
// its order; they are listed even when nothing is set up for them.
var popular = []string{"opencode", "opencode-go", "openai", "github-copilot", "anthropic", "google"}

// maxTargets bounds the targets of a status.
const maxTargets = 512

// status is the login status: a target per provider that has login
// methods of its own, a login of any kind, or is one of the popular
// ones (the catalog's hundreds of others are left out; each takes a key
// the same way); popular first, then by name.
func (v *view) status() hub.AgentLoginStatus {
	st := hub.AgentLoginStatus{Version: v.version, Targets: []hub.AgentLoginTarget{},
		Capabilities: hub.AgentAccountCapabilities{Login: true, Logout: true}}
	if v.store.FromEnv {
		// A login would land in the file OpenCode ignores, and the
		// variable's logins cannot be removed.
		st.Capabilities = hub.AgentAccountCapabilities{}
	}
	ids := map[string]bool{}
	for _, id := range popular {
		if v.known(id) {
			ids[id] = true
		}
	}
	for id := range v.methods {
		ids[id] = true
	}
	for _, l := range v.store.Logins {
		ids[l.Provider] = true
	}
	for _, p := range v.catalog.Providers {
		if len(v.envVars(p.ID)) > 0 {
			ids[p.ID] = true
		}
	}
	for id := range v.connected {
		ids[id] = true
	}
	for id := range ids {
		t := hub.AgentLoginTarget{ID: id, Name: v.name(id), Credentials: v.credentials(id), Methods: v.targetMethods(id)}
		t.Connected = len(t.Credentials) > 0
		st.Targets = append(st.Targets, t)
	}
	rank := func(id string) int {
		for i, p := range popular {
			if p == id {
				return i
			}
		}
		return len(popular)
	}
	sort.Slice(st.Targets, func(i, j int) bool {
		a, b := st.Targets[i], st.Targets[j]
		if ra, rb := rank(a.ID), rank(b.ID); ra != rb {
			return ra < rb
		}
		if na, nb := strings.ToLower(a.Name), strings.ToLower(b.Name); na != nb {
			return na < nb
		}
		return a.ID < b.ID
	})
	if len(st.Targets) > maxTargets {
		st.Targets = st.Targets[:maxTargets]
	}
	return st
}

// provider finds id in the catalog, else among the connected providers
// (a provider of the user's configuration may be only there).
func (v *view) provider(id string) (provider, bool) {
	if p, ok := v.catalog.find(id); ok {
		return p, true
	}
	p, ok := v.connected[id]
	return p, ok
}

// known reports whether OpenCode knows provider id: a login for it can
// be made.
func (v *view) known(id string) bool {
	_, ok := v.provider(id)
	return ok || len(v.methods[id]) > 0
}

// name is the provider's name for people.
func (v *view) name(id string) string {
	if p, ok := v.provider(id); ok && p.Name != "" {
		return p.Name
	}
	return id
}

// envVars are the provider's key variables set in the runtime's
// environment.
func (v *view) envVars(id string) []string {
	p, _ := v.provider(id)
	var set []string
	for _, name := range p.Env {
		if driver.Getenv(v.env, name) != "" {
			set = append(set, name)
		}
	}
	return set
}

// keyMethod is the method of a provider without methods of its own:
// OpenCode's clients then ask for an API key.
var keyMethod = hub.AgentLoginMethod{ID: "0", Kind: hub.AgentMethodKey, Label: "API key", Fields: []hub.AgentLoginField{}}

// targetMethods are the ways to log in to id: its own methods (else an
// API key), and, when it reads a key from the environment, setting that
// variable. A provider OpenCode does not know has none.
func (v *view) targetMethods(id string) []hub.AgentLoginMethod {
	if !v.known(id) {
		return []hub.AgentLoginMethod{}
	}
	out := append([]hub.AgentLoginMethod(nil), v.methods[id]...)
	if len(out) == 0 {
		out = append(out, keyMethod)
	}
	if p, _ := v.provider(id); len(p.Env) > 0 {
		out = append(out, hub.AgentLoginMethod{ID: "env", Kind: hub.AgentMethodEnv, Fields: []hub.AgentLoginField{},
			Label: "Set " + strings.Join(p.Env, " or ") + " where the Hub runs", Variables: p.Env})
	}
	return out
}

// Credential ids of the logins that are not in the store.
const (
	credEnv    = "env"
	credConfig = "config"
	credOther  = "other"
)

// credentials are id's logins, the one OpenCode uses marked active: its
// configuration's key wins, then the saved login, then the environment's
// key (OpenCode loads them in the reverse order, each replacing the last).
func (v *view) credentials(id string) []hub.AgentCredential {
	creds := []hub.AgentCredential{}
	conn, isConn := v.connected[id]
	config := isConn && conn.Source == "config"
	for _, l := range v.store.Logins {
		if l.Provider != id {
			continue
		}
		c := hub.AgentCredential{ID: id, Kind: savedKind(l.Type), Label: savedLabel(l.Type), Active: !config, Removable: true}
		if v.store.FromEnv {
			c.Kind, c.Removable, c.Variables = hub.AgentCredentialEnv, false, []string{authContentVar}
			c.Label += " (from " + authContentVar + ")"
		}
		creds = append(creds, c)
	}
	if vars := v.envVars(id); len(vars) > 0 {
		creds = append(creds, hub.AgentCredential{ID: credEnv, Kind: hub.AgentCredentialEnv, Variables: vars,
			Label: "Key from the environment (" + strings.Join(vars, ", ") + ")", Active: !config && len(creds) == 0})
	}
	switch {
	case config:
		creds = append(creds, hub.AgentCredential{ID: credConfig, Kind: hub.AgentCredentialConfig,
			Label: "Set in OpenCode's configuration", Active: true})
	case isConn && conn.Source == "custom" && len(creds) == 0:
		// Connected by a loader of OpenCode's own (its free models, a
		// cloud's credential chain, a plugin): nothing the Hub can remove.
		creds = append(creds, hub.AgentCredential{ID: credOther, Kind: hub.AgentCredentialOther,
			Label: "Connected by OpenCode itself (built in, or a plugin's own login)", Active: true})
	}
	return creds
}

// savedKind is the credential kind of a store entry's type.
func savedKind(typ string) string {
	switch typ {
	case "api":
		return hub.AgentCredentialKey
	case "oauth":
		return hub.AgentCredentialOAuth
	}
	return hub.AgentCredentialSaved
}

// savedLabel names a store entry's type for people.
func savedLabel(typ string) string {
	switch typ {
	case "api":
		return "API key"
	case "oauth":
		return "Browser login"
	}
	return "Organization login"
}
