package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// setupWorkspaces registers n new folders of the writer's root as stopped
// workspaces (the Hub runs git init) and returns their ids, in order, with
// the folder names they got.
func setupWorkspaces(ctx context.Context, w *Writer, n int) (ids, names []string, err error) {
	for range n {
		name := w.NewName("s")
		path := filepath.Join(w.Root, name)
		if err := os.Mkdir(path, 0o755); err != nil {
			return nil, nil, err
		}
		var res struct {
			ID string `json:"id"`
		}
		if err := w.Call(ctx, "POST", "api/hub/workspaces", map[string]any{"path": path, "init": true, "start": false}, &res); err != nil {
			return nil, nil, err
		}
		ids, names = append(ids, res.ID), append(names, name)
	}
	return ids, names, nil
}

// DisplayNameFamily changes the display names of the writer's three
// workspaces. Its facts are "workspace <id>" → "name=<display name>".
func DisplayNameFamily() *Family {
	return &Family{Name: "display-names", Setup: setupDisplayNames, Next: nextDisplayName, Observe: observeDisplayNames}
}

func setupDisplayNames(ctx context.Context, w *Writer) error {
	ids, names, err := setupWorkspaces(ctx, w, 3)
	for i, id := range ids {
		w.Model["workspace "+id] = "name=" + names[i] // a registration names it after its folder
	}
	return err
}

func nextDisplayName(w *Writer) (Op, error) {
	keys := w.Model.Keys("workspace ")
	id := strings.TrimPrefix(keys[w.Rand.IntN(len(keys))], "workspace ")
	sent, kept := newDisplayName(w)
	return Op{Name: "set", Method: "POST", Path: "api/hub/workspaces/" + id + "/display-name",
		Body: map[string]string{"displayName": sent},
		Acked: func(m Model, answer []byte) error {
			m["workspace "+id] = "name=" + kept
			var res struct {
				Workspace struct{ ID, DisplayName string }
			}
			if err := json.Unmarshal(answer, &res); err != nil || res.Workspace.ID != id || res.Workspace.DisplayName != kept {
				return fmt.Errorf("display-name answer %q, want %s named %q (%v)", answer, id, kept, err)
			}
			return nil
		},
		Landed: func(m, _ Model) { m["workspace "+id] = "name=" + kept },
	}, nil
}

func observeDisplayNames(_ context.Context, w *Writer, st HubState) (Model, error) {
	m := Model{}
	for _, ws := range st.Workspaces {
		if within(ws.Path, w.Root) {
			m["workspace "+ws.ID] = "name=" + ws.DisplayName
		}
	}
	return m, nil
}

// PersonalStateFamily patches the first user's personal state in the
// writer's two workspaces (PATCH /s/{id}/api/personal-state, which the Hub
// answers for a stopped workspace too). Its facts are "state <id>" → the
// state's fields as canonical JSON, without the version.
func PersonalStateFamily() *Family {
	return &Family{Name: "personal-state", Setup: setupPersonalState, Next: nextPatch, Observe: observePersonalState}
}

func setupPersonalState(ctx context.Context, w *Writer) error {
	ids, _, err := setupWorkspaces(ctx, w, 2)
	for _, id := range ids {
		w.Model["state "+id] = "{}" // nothing set yet
	}
	return err
}

// patchValues are the values each field takes (nil clears it); lastPtyId's
// are drawn at random.
var patchValues = map[string][]any{
	"documentPath":  {"README.md", "docs/notes.md", "src/é/main.go", nil},
	"follow":        {true, false, nil},
	"previewMode":   {"rendered", "source", "diff", nil},
	"compareTarget": {"base", "last-commit", nil},
	"filesFilter":   {"all", "changed", nil},
	"lastPtyId":     {"", nil},
}

var patchFields = []string{"documentPath", "follow", "previewMode", "compareTarget", "filesFilter", "lastPtyId"}

func nextPatch(w *Writer) (Op, error) {
	keys := w.Model.Keys("state ")
	id := strings.TrimPrefix(keys[w.Rand.IntN(len(keys))], "state ")
	patch := map[string]any{}
	for range 1 + w.Rand.IntN(3) {
		f := patchFields[w.Rand.IntN(len(patchFields))]
		vs := patchValues[f]
		v := vs[w.Rand.IntN(len(vs))]
		if v == "" {
			v = fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", w.Rand.Uint32(), w.Rand.IntN(1<<16),
				w.Rand.IntN(1<<12), w.Rand.IntN(1<<12), w.Rand.Uint64()&(1<<48-1))
		}
		patch[f] = v
	}
	apply := func(m Model) {
		st := map[string]any{}
		_ = json.Unmarshal([]byte(m["state "+id]), &st)
		for f, v := range patch {
			if v == nil {
				delete(st, f)
			} else {
				st[f] = v
			}
		}
		m["state "+id] = canonical(st)
	}
	return Op{Name: "patch", Method: "PATCH", Path: "s/" + id + "/api/personal-state", Body: patch,
		Acked: func(m Model, answer []byte) error {
			apply(m)
			got, err := canonicalState(answer)
			if err != nil || got != m["state "+id] {
				return fmt.Errorf("personal-state answer %q, want %s (%v)", answer, m["state "+id], err)
			}
			return nil
		},
		Landed: func(m, _ Model) { apply(m) },
	}, nil
}

func observePersonalState(ctx context.Context, w *Writer, st HubState) (Model, error) {
	m := Model{}
	for _, ws := range st.Workspaces {
		if !within(ws.Path, w.Root) {
			continue
		}
		_, body, err := w.Client.Do(ctx, "GET", "s/"+ws.ID+"/api/personal-state", nil, nil)
		if err != nil {
			return nil, err
		}
		if m["state "+ws.ID], err = canonicalState(body); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// canonicalState returns a PersonalState answer's fields, without the
// version, as canonical JSON.
func canonicalState(answer []byte) (string, error) {
	st := map[string]any{}
	if err := json.Unmarshal(answer, &st); err != nil {
		return "", fmt.Errorf("personal state %q: %w", answer, err)
	}
	if st["version"] != float64(1) {
		return "", fmt.Errorf("personal state %q: want version 1", answer)
	}
	delete(st, "version")
	return canonical(st), nil
}

// canonical encodes v as JSON with sorted keys (encoding/json sorts a
// map's keys).
func canonical(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
