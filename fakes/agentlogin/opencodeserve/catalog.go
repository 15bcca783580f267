package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
)

// fakeProvider is a provider of the fake's catalog.
type fakeProvider struct {
	ID, Name string
	Env      []string
	// Builtin: OpenCode connects it by itself (OpenCode Zen's free
	// models), source "custom".
	Builtin bool
	// Loader: a loader of its own takes over once it has a browser login
	// (source "custom"), as OpenCode's plugin providers do.
	Loader bool
}

// providers is the fake's catalog, in the order the real one lists it
// (not sorted).
var providers = []fakeProvider{
	{ID: "zeta", Name: "Zeta Cloud", Env: []string{"ZETA_API_KEY"}},
	{ID: "fakeloop", Name: "Fake Loopback"},
	{ID: "anthropic", Name: "Anthropic", Env: []string{"ANTHROPIC_API_KEY"}},
	{ID: "fakecode", Name: "Fake Code", Env: []string{"FAKECODE_API_KEY"}, Loader: true},
	{ID: "openai", Name: "OpenAI", Env: []string{"OPENAI_API_KEY"}},
	{ID: "fakedevice", Name: "Fake Device", Loader: true},
	{ID: "opencode", Name: "OpenCode Zen", Env: []string{"OPENCODE_API_KEY"}, Builtin: true},
}

// authMethods is the answer of GET /provider/auth: the providers with an
// auth plugin, in OpenCode's shape (prompts only when there are some).
var authMethods = map[string][]any{
	"fakecode": {
		map[string]any{"type": "oauth", "label": "Log in with Fake Code (paste a code)"},
		map[string]any{"type": "api", "label": "Manually enter API Key"},
	},
	"fakeloop": {
		map[string]any{"type": "oauth", "label": "Log in with the browser", "prompts": []any{
			map[string]any{"type": "select", "key": "region", "message": "Select your region", "options": []any{
				map[string]any{"label": "United States", "value": "us"},
				map[string]any{"label": "Europe", "value": "eu", "hint": "Data stays in the EU"},
			}},
			map[string]any{"type": "text", "key": "tenant", "message": "Enter your EU tenant", "placeholder": "acme",
				"when": map[string]any{"key": "region", "op": "eq", "value": "eu"}},
		}},
		map[string]any{"type": "api", "label": "Paste a key", "prompts": []any{
			map[string]any{"type": "text", "key": "accountId", "message": "Enter your account ID", "placeholder": "e.g. 1234"},
		}},
	},
	"fakedevice": {
		map[string]any{"type": "oauth", "label": "Log in on another device"},
	},
}

// connected is a provider OpenCode can use, and how it got its key.
type connected struct {
	ID, Name, Source string
	Env              []string
	Key              string // what OpenCode's answers carry along
}

// connectedNow works out the connected providers as OpenCode does, each
// source replacing the one before: the environment, the store, loaders
// of its own, the configuration.
func connectedNow() []connected {
	logins := readAuth()
	config := readConfig()
	var out []connected
	for _, p := range providers {
		c := connected{ID: p.ID, Name: p.Name, Env: p.Env}
		for _, v := range p.Env {
			if k := os.Getenv(v); k != "" && c.Source == "" {
				c.Source, c.Key = "env", k
			}
		}
		if l, ok := logins[p.ID]; ok {
			switch l.Type {
			case "api":
				c.Source, c.Key = "api", l.Key
			case "oauth":
				c.Source, c.Key = "api", ""
				if p.Loader {
					c.Source = "custom"
				}
			}
		}
		if p.Builtin && c.Source == "" {
			c.Source = "custom"
		}
		if k, ok := config[p.ID]; ok {
			c.Source, c.Key = "config", k.Options.APIKey
			delete(config, p.ID)
		}
		if c.Source != "" {
			out = append(out, c)
		}
	}
	for id, k := range config { // providers of the configuration alone
		out = append(out, connected{ID: id, Name: k.Name, Source: "config", Key: k.Options.APIKey, Env: []string{}})
	}
	return out
}

// configProvider is a provider entry of opencode.json.
type configProvider struct {
	Name    string `json:"name"`
	Options struct {
		APIKey string `json:"apiKey"`
	} `json:"options"`
}

// readConfig reads the providers of the user's opencode.json.
func readConfig() map[string]configProvider {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(os.Getenv("HOME"), ".config")
	}
	var cfg struct {
		Provider map[string]configProvider `json:"provider"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "opencode", "opencode.json")); err == nil {
		_ = json.Unmarshal(data, &cfg)
	}
	if cfg.Provider == nil {
		return map[string]configProvider{}
	}
	return cfg.Provider
}

// snap returns the cached connected providers, working them out on the
// first request after a start or a dispose.
func (s *server) snap() []connected {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snapshot == nil {
		s.snapshot = connectedNow()
	}
	return s.snapshot
}

// providerJSON is a provider as the real server lists it: with models,
// and with the key it found (the real one does that too).
func providerJSON(id, name, source string, env []string, key string) map[string]any {
	p := map[string]any{"id": id, "name": name, "source": source, "env": env, "options": map[string]any{},
		"models": map[string]any{
			id + "-large": map[string]any{"id": id + "-large", "providerID": id, "name": "Large",
				"cost":  map[string]any{"input": 3, "output": 15, "cache": map[string]any{"read": 0.3}},
				"limit": map[string]any{"context": 200000, "output": 64000}, "variants": map[string]any{}},
			id + "-small": map[string]any{"id": id + "-small", "providerID": id, "name": "Small",
				"capabilities": map[string]any{"input": map[string]any{"text": true}}},
		}}
	if key != "" {
		p["key"] = key
	}
	return p
}

// listProviders answers GET /provider: every provider, and the ids of the
// connected ones.
func (s *server) listProviders(w http.ResponseWriter, r *http.Request) {
	conn := s.snap()
	byID := map[string]connected{}
	ids := []string{}
	for _, c := range conn {
		byID[c.ID] = c
		ids = append(ids, c.ID)
	}
	all := []any{}
	for _, p := range providers {
		c := byID[p.ID]
		source := c.Source
		if source == "" {
			source = "custom"
		}
		all = append(all, providerJSON(p.ID, p.Name, source, p.Env, c.Key))
	}
	writeJSON(w, 200, map[string]any{"all": all, "default": map[string]any{}, "connected": ids})
}

// configProviders answers GET /config/providers: the connected providers.
func (s *server) configProviders(w http.ResponseWriter, r *http.Request) {
	list := []any{}
	for _, c := range s.snap() {
		list = append(list, providerJSON(c.ID, c.Name, c.Source, c.Env, c.Key))
	}
	writeJSON(w, 200, map[string]any{"providers": list, "default": map[string]any{}})
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false) // as JavaScript's JSON.stringify
	_ = e.Encode(v)
}
