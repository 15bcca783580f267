package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// authEntry is one login of auth.json, in OpenCode's shapes: {type: api,
// key, metadata?} | {type: oauth, refresh, access, expires, …} |
// {type: wellknown, key, token}.
type authEntry struct {
	Type     string            `json:"type"`
	Key      string            `json:"key,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Refresh  string            `json:"refresh,omitempty"`
	Access   string            `json:"access,omitempty"`
	Expires  *int64            `json:"expires,omitempty"`
	Token    string            `json:"token,omitempty"`
}

// valid reports whether OpenCode's schema accepts e.
func (e authEntry) valid() bool {
	switch e.Type {
	case "api":
		return e.Key != ""
	case "oauth":
		return e.Refresh != "" && e.Access != "" && e.Expires != nil
	case "wellknown":
		return e.Key != "" && e.Token != ""
	}
	return false
}

// authPath is OpenCode's store.
func authPath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(os.Getenv("HOME"), ".local", "share")
	}
	return filepath.Join(dir, "opencode", "auth.json")
}

// readAuth reads the logins OpenCode uses: those of
// OPENCODE_AUTH_CONTENT when it is JSON, else the store's.
func readAuth() map[string]authEntry {
	if content := os.Getenv("OPENCODE_AUTH_CONTENT"); content != "" && json.Valid([]byte(content)) {
		return parseAuth([]byte(content))
	}
	return readFileAuth()
}

// readFileAuth reads the store file: what a change rewrites. A missing
// or broken one is empty.
func readFileAuth() map[string]authEntry {
	data, err := os.ReadFile(authPath())
	if err != nil {
		return map[string]authEntry{}
	}
	return parseAuth(data)
}

// parseAuth reads logins, leaving out the entries OpenCode's schema
// refuses; JSON that is no object holds none.
func parseAuth(data []byte) map[string]authEntry {
	out := map[string]authEntry{}
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return out
	}
	for id, v := range raw {
		var e authEntry
		if json.Unmarshal(v, &e) == nil && e.valid() {
			out[id] = e
		}
	}
	return out
}

// writeAuth writes the store whole, 0600, by rename.
func writeAuth(logins map[string]authEntry) error {
	path := authPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(logins, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// saveLogin sets id's login in the store.
func (s *server) saveLogin(id string, e authEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logins := readFileAuth()
	logins[id] = e
	return writeAuth(logins)
}

// setAuth answers PUT /auth/{id}: any provider id is taken, as by the
// real server; a body that is no Auth is refused with the real server's
// 400, which repeats the body.
func (s *server) setAuth(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var e authEntry
	d := json.NewDecoder(bytes.NewReader(body))
	if d.Decode(&e) != nil || !e.valid() || os.Getenv("FAKE_OPENCODESERVE_REFUSE_AUTH") == "1" {
		writeJSON(w, 400, map[string]any{"name": "BadRequest", "data": map[string]any{
			"message": "Expected Auth, got " + string(body), "kind": "Payload"}})
		return
	}
	if err := s.saveLogin(r.PathValue("id"), e); err != nil {
		writeJSON(w, 500, map[string]any{"name": "UnknownError", "data": map[string]any{"message": "Unexpected server error."}})
		return
	}
	writeJSON(w, 200, true)
}

// removeAuth answers DELETE /auth/{id}: true, whether there was a login.
func (s *server) removeAuth(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	logins := readFileAuth()
	delete(logins, r.PathValue("id"))
	err := writeAuth(logins)
	s.mu.Unlock()
	if err != nil {
		writeJSON(w, 500, map[string]any{"name": "UnknownError", "data": map[string]any{"message": "Unexpected server error."}})
		return
	}
	writeJSON(w, 200, true)
}
