package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// CredentialFamily creates tokens, assigns them to the writer's two
// workspaces as their authentication defaults, unassigns them and deletes
// them (with their assignments), so a kill can cut each between its
// store transaction and its answer. Its facts are "credential <name>" →
// "id=<id> host=<host>" and "assignment <workspace> <host>" → the
// credential's name: an assignment half-applied, or one that outlived its
// credential, shows as a fact the model does not hold.
func CredentialFamily() *Family {
	return &Family{Name: "credentials", Setup: setupCredentials, Next: nextCredentialOp, Observe: observeCredentials}
}

// credentialHosts are the hosts the tokens are for: few, so assignments
// replace each other.
var credentialHosts = []string{"git.example.com", "code.example.org:8443", "[2001:db8::1]"}

func setupCredentials(ctx context.Context, w *Writer) error {
	ids, _, err := setupWorkspaces(ctx, w, 2)
	for _, id := range ids {
		w.Model["workspace "+id] = ""
	}
	return err
}

// credentialPrefix names the writer's credentials apart from every other
// writer's.
func credentialPrefix(w *Writer) string { return filepath.Base(w.Root) + "-" }

func nextCredentialOp(w *Writer) (Op, error) {
	creds := w.Model.Keys("credential ")
	wss := w.Model.Keys("workspace ")
	choice := w.Rand.IntN(10)
	switch {
	case len(creds) == 0 || len(creds) < 4 && choice < 3:
		return createTokenOp(w), nil
	case choice < 6:
		name := strings.TrimPrefix(creds[w.Rand.IntN(len(creds))], "credential ")
		ws := strings.TrimPrefix(wss[w.Rand.IntN(len(wss))], "workspace ")
		id, host := credentialFact(w.Model["credential "+name])
		assign := func(m Model) { m["assignment "+ws+" "+host] = name }
		return Op{Name: "assign", Method: "POST", Path: "api/hub/credentials/" + id + "/assign",
			Body:   map[string]any{"workspaceId": ws, "role": "authentication", "host": host, "replace": true},
			Acked:  func(m Model, _ []byte) error { assign(m); return nil },
			Landed: func(m, _ Model) { assign(m) },
		}, nil
	case choice < 8:
		as := w.Model.Keys("assignment ")
		if len(as) == 0 {
			return createTokenOp(w), nil
		}
		key := as[w.Rand.IntN(len(as))]
		ws, host, _ := strings.Cut(strings.TrimPrefix(key, "assignment "), " ")
		id, _ := credentialFact(w.Model["credential "+w.Model[key]])
		remove := func(m Model) { delete(m, key) }
		return Op{Name: "unassign", Method: "POST", Path: "api/hub/credentials/" + id + "/unassign",
			Body:   map[string]any{"workspaceId": ws, "role": "authentication", "host": host},
			Acked:  func(m Model, _ []byte) error { remove(m); return nil },
			Landed: func(m, _ Model) { remove(m) },
		}, nil
	default:
		name := strings.TrimPrefix(creds[w.Rand.IntN(len(creds))], "credential ")
		id, _ := credentialFact(w.Model["credential "+name])
		remove := func(m Model) {
			delete(m, "credential "+name)
			for _, k := range m.Keys("assignment ") {
				if m[k] == name {
					delete(m, k)
				}
			}
		}
		return Op{Name: "delete", Method: "POST", Path: "api/hub/credentials/" + id + "/delete",
			Body:   map[string]any{"confirm": true, "unassign": true},
			Acked:  func(m Model, _ []byte) error { remove(m); return nil },
			Landed: func(m, _ Model) { remove(m) },
		}, nil
	}
}

// createTokenOp stores a new token for one of the hosts.
func createTokenOp(w *Writer) Op {
	name := credentialPrefix(w) + w.NewName("token")
	host := credentialHosts[w.Rand.IntN(len(credentialHosts))]
	return Op{Name: "create", Method: "POST", Path: "api/hub/credentials/token",
		Body: map[string]any{"name": name, "host": host, "token": fmt.Sprintf("tok-%016x", w.Rand.Uint64()), "capabilities": []string{"https-git"}},
		Acked: func(m Model, answer []byte) error {
			var res struct {
				Credential struct {
					ID, Name string
					Metadata struct{ Host string }
				}
			}
			if err := json.Unmarshal(answer, &res); err != nil || res.Credential.Name != name || res.Credential.Metadata.Host != host {
				return fmt.Errorf("token answer %q, want %s for %s (%v)", answer, name, host, err)
			}
			m["credential "+name] = "id=" + res.Credential.ID + " host=" + host
			return nil
		},
		// The daemon mints the id: a token that landed unseen is as the
		// restarted daemon holds it, when it holds it.
		Landed: func(m, obs Model) {
			if v, ok := obs["credential "+name]; ok {
				m["credential "+name] = v
			}
		},
	}
}

// credentialFact reads a credential fact's id and host.
func credentialFact(v string) (id, host string) {
	idPart, hostPart, _ := strings.Cut(v, " ")
	return strings.TrimPrefix(idPart, "id="), strings.TrimPrefix(hostPart, "host=")
}

// observeCredentials lists the writer's tokens and the assignments of its
// workspaces through GET /api/hub/credentials.
func observeCredentials(ctx context.Context, w *Writer, _ HubState) (Model, error) {
	var list struct {
		Credentials []struct {
			ID, Name    string
			Metadata    struct{ Host string }
			Assignments []struct{ WorkspaceID, Role, Host string }
		}
	}
	if err := w.Call(ctx, "GET", "api/hub/credentials", nil, &list); err != nil {
		return nil, err
	}
	m := Model{}
	for _, k := range w.Model.Keys("workspace ") {
		m[k] = "" // set up before the kills; never changed by this family
	}
	for _, c := range list.Credentials {
		if !strings.HasPrefix(c.Name, credentialPrefix(w)) {
			continue
		}
		m["credential "+c.Name] = "id=" + c.ID + " host=" + c.Metadata.Host
		for _, a := range c.Assignments {
			if _, ours := w.Model["workspace "+a.WorkspaceID]; ours && a.Role == "authentication" {
				key := "assignment " + a.WorkspaceID + " " + a.Host
				if prev, twice := m[key]; twice {
					m[key] = strings.Join(slices.Sorted(slices.Values([]string{prev, c.Name})), "+") // two defaults for one place
					continue
				}
				m[key] = c.Name
			}
		}
	}
	return m, nil
}
