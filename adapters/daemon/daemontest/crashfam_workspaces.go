package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WorkspaceFamily registers folders as workspaces (the legacy
// registration, configure and create, each with the Hub's own git init,
// each under an onboarding journal), forgets them, removes their folders
// (emptied first, as a user would: a removal journal), and renames the
// folders ("boxes") that hold them, which moves their paths under a rename
// journal. Workspaces are never started: a restart then costs no session
// child. Its facts:
//
//	box <name>            → ""                       a folder of the root
//	dir <box>/<name>      → "" | "registered=<id> name=<display name>[ (no repository)]"
//	workspace <id>        → "path=<box>/<name> name=<display name>"
//
// so every check also compares the registry (state) with the disk and the
// browse answer.
func WorkspaceFamily() *Family {
	return &Family{Name: "workspaces", Setup: setupBoxes, Next: nextWorkspaceOp, Observe: observeWorkspaces}
}

// maxWorkspaces bounds a writer's registrations: above it, it forgets.
const maxWorkspaces = 6

// setupBoxes makes the writer's three boxes on disk.
func setupBoxes(_ context.Context, w *Writer) error {
	for range 3 {
		name := w.NewName("b")
		if err := os.Mkdir(filepath.Join(w.Root, name), 0o755); err != nil {
			return err
		}
		w.Model["box "+name] = ""
	}
	return nil
}

// addWorkspace records workspace id registered at rel with its name.
func addWorkspace(m Model, id, rel, name string) {
	m["dir "+rel] = "registered=" + id + " name=" + name
	m["workspace "+id] = "path=" + rel + " name=" + name
}

// registeredAt returns the id of obs's workspace at rel, or "".
func registeredAt(obs Model, rel string) string {
	for _, k := range obs.Keys("workspace ") {
		if strings.HasPrefix(obs[k], "path="+rel+" ") {
			return strings.TrimPrefix(k, "workspace ")
		}
	}
	return ""
}

func nextWorkspaceOp(w *Writer) (Op, error) {
	boxes := w.Model.Keys("box ")
	box := strings.TrimPrefix(boxes[w.Rand.IntN(len(boxes))], "box ")
	registered := w.Model.Keys("workspace ")
	choice := w.Rand.IntN(100)
	pick := func() string { return strings.TrimPrefix(registered[w.Rand.IntN(len(registered))], "workspace ") }
	switch {
	case len(registered) >= maxWorkspaces || len(registered) > 0 && choice >= 88:
		return forgetOp(w, pick()), nil
	case len(registered) > 0 && choice >= 78:
		return removeOp(w, pick())
	case choice < 22:
		return registerOp(w, box)
	case choice < 40:
		return configureOp(w, box)
	case choice < 58:
		return createOp(w, box), nil
	default:
		return renameBoxOp(w, box), nil
	}
}

// registerOp makes a folder in box and registers it the legacy way; its
// display name is the folder's name.
func registerOp(w *Writer, box string) (Op, error) {
	name := w.NewName("w")
	rel := box + "/" + name
	if err := os.Mkdir(filepath.Join(w.Root, rel), 0o755); err != nil {
		return Op{}, err
	}
	w.Model["dir "+rel] = ""
	return Op{Name: "register", Method: "POST", Path: "api/hub/workspaces",
		Body: on(w, map[string]any{"path": filepath.Join(w.Root, rel), "init": true, "start": false}),
		Acked: func(m Model, answer []byte) error {
			var res struct {
				ID      string `json:"id"`
				Running bool   `json:"running"`
			}
			if err := json.Unmarshal(answer, &res); err != nil || res.ID == "" || res.Running {
				return fmt.Errorf("registration answer %q: %v", answer, err)
			}
			addWorkspace(m, res.ID, rel, name)
			return nil
		},
		Landed: func(m, obs Model) {
			if id := registeredAt(obs, rel); id != "" {
				addWorkspace(m, id, rel, name)
			}
		},
	}, nil
}

// displayNames vary the names given: non-ASCII, and padding the Hub trims.
var displayNames = []string{"Docs %d", "Café %d ✓", "数据 %d", "  Padded %d  "}

// newDisplayName returns a display name as sent and as the Hub keeps it.
func newDisplayName(w *Writer) (sent, kept string) {
	sent = fmt.Sprintf(displayNames[w.Rand.IntN(len(displayNames))], w.NewName(""))
	return sent, strings.TrimSpace(sent)
}

// onboardingAnswer checks a configure or create answer and returns the id.
func onboardingAnswer(answer []byte, path, name string) (string, error) {
	var res struct {
		Workspace struct {
			ID, DisplayName, Path string
			Running               bool
		}
		Started bool
	}
	if err := json.Unmarshal(answer, &res); err != nil {
		return "", fmt.Errorf("onboarding answer %q: %w", answer, err)
	}
	ws := res.Workspace
	if ws.ID == "" || ws.Path != path || ws.DisplayName != name || ws.Running || res.Started {
		return "", fmt.Errorf("onboarding answer %q, want %s named %q, stopped", answer, path, name)
	}
	return ws.ID, nil
}

// configureOp makes a folder in box and registers it with a display name.
func configureOp(w *Writer, box string) (Op, error) {
	name := w.NewName("c")
	rel := box + "/" + name
	path := filepath.Join(w.Root, rel)
	if err := os.Mkdir(path, 0o755); err != nil {
		return Op{}, err
	}
	w.Model["dir "+rel] = ""
	sent, kept := newDisplayName(w)
	return Op{Name: "configure", Method: "POST", Path: "api/hub/workspaces/configure",
		Body: on(w, map[string]any{"path": path, "displayName": sent, "init": true, "start": false}),
		Acked: func(m Model, answer []byte) error {
			id, err := onboardingAnswer(answer, path, kept)
			if err == nil {
				addWorkspace(m, id, rel, kept)
			}
			return err
		},
		Landed: func(m, obs Model) {
			if id := registeredAt(obs, rel); id != "" {
				addWorkspace(m, id, rel, kept)
			}
		},
	}, nil
}

// createOp has the Hub create a folder in box, git init it and register it.
// Cut by a kill, the folder may stay without its registration: the
// contract keeps an initialized repository.
func createOp(w *Writer, box string) Op {
	name := w.NewName("n")
	rel := box + "/" + name
	path := filepath.Join(w.Root, rel)
	sent, kept := newDisplayName(w)
	return Op{Name: "create", Method: "POST", Path: "api/hub/workspaces/create",
		Body: on(w, map[string]any{"parent": filepath.Join(w.Root, box), "folderName": name, "displayName": sent, "start": false}),
		Acked: func(m Model, answer []byte) error {
			id, err := onboardingAnswer(answer, path, kept)
			if err == nil {
				addWorkspace(m, id, rel, kept)
			}
			return err
		},
		Landed: func(m, obs Model) {
			if id := registeredAt(obs, rel); id != "" {
				addWorkspace(m, id, rel, kept)
			} else if _, ok := obs["dir "+rel]; ok {
				m["dir "+rel] = ""
			}
		},
	}
}

// renameBoxOp renames a box: the paths of the workspaces inside follow.
func renameBoxOp(w *Writer, box string) Op {
	name := w.NewName("b")
	var moved []string
	for _, k := range w.Model.Keys("workspace ") {
		if strings.HasPrefix(w.Model[k], "path="+box+"/") {
			moved = append(moved, strings.TrimPrefix(k, "workspace "))
		}
	}
	return Op{Name: "rename", Method: "POST", Path: "api/hub/folders/rename",
		Body: on(w, map[string]any{"path": filepath.Join(w.Root, box), "name": name}),
		Acked: func(m Model, answer []byte) error {
			rebase(m, box, name)
			var res struct {
				Path         string   `json:"path"`
				WorkspaceIDs []string `json:"workspaceIds"`
			}
			if err := json.Unmarshal(answer, &res); err != nil {
				return fmt.Errorf("rename answer %q: %w", answer, err)
			}
			slices.Sort(res.WorkspaceIDs)
			if res.Path != filepath.Join(w.Root, name) || !slices.Equal(res.WorkspaceIDs, moved) {
				return fmt.Errorf("rename answer %q, want the workspaces %v moved", answer, moved)
			}
			return nil
		},
		Landed: func(m, _ Model) { rebase(m, box, name) },
	}
}

// rebase moves every fact of box from to box to.
func rebase(m Model, from, to string) {
	for _, k := range slices.Collect(maps.Keys(m)) {
		v := m[k]
		nk, nv := k, strings.Replace(v, "path="+from+"/", "path="+to+"/", 1)
		switch {
		case k == "box "+from:
			nk = "box " + to
		case strings.HasPrefix(k, "dir "+from+"/"):
			nk = "dir " + to + "/" + strings.TrimPrefix(k, "dir "+from+"/")
		}
		delete(m, k)
		m[nk] = nv
	}
}

// forgetOp forgets a workspace; its folder stays.
func forgetOp(w *Writer, id string) Op {
	rel := strings.TrimPrefix(strings.Fields(w.Model["workspace "+id])[0], "path=")
	forget := func(m Model) {
		delete(m, "workspace "+id)
		m["dir "+rel] = ""
	}
	return Op{Name: "forget", Method: "POST", Path: "api/hub/workspaces/" + id + "/forget",
		Acked: func(m Model, answer []byte) error {
			forget(m)
			var res struct{ Forgotten, Running bool }
			if err := json.Unmarshal(answer, &res); err != nil || !res.Forgotten || res.Running {
				return fmt.Errorf("forget answer %q: %v", answer, err)
			}
			return nil
		},
		Landed: func(m, _ Model) { forget(m) },
	}
}

// removeOp empties a workspace's folder on disk (its .git: the writer
// puts nothing else there) and has the Hub remove the folder, which
// forgets the workspace under a removal journal.
func removeOp(w *Writer, id string) (Op, error) {
	rel := strings.TrimPrefix(strings.Fields(w.Model["workspace "+id])[0], "path=")
	path := filepath.Join(w.Root, rel)
	if err := os.RemoveAll(filepath.Join(path, ".git")); err != nil {
		return Op{}, err
	}
	w.Model["dir "+rel] = strings.TrimSuffix(w.Model["dir "+rel], noRepository) + noRepository
	remove := func(m Model) {
		delete(m, "workspace "+id)
		delete(m, "dir "+rel)
	}
	return Op{Name: "remove", Method: "POST", Path: "api/hub/folders/remove", Body: on(w, map[string]any{"path": path}),
		Acked: func(m Model, answer []byte) error {
			remove(m)
			var res struct{ Path, WorkspaceID string }
			if err := json.Unmarshal(answer, &res); err != nil || res.Path != path || res.WorkspaceID != id {
				return fmt.Errorf("removal answer %q, want %s and workspace %s (%v)", answer, path, id, err)
			}
			return nil
		},
		Landed: func(m, _ Model) { remove(m) },
	}, nil
}

// on adds the writer's backend to a request's body, when it has one.
func on(w *Writer, body map[string]any) map[string]any {
	if w.Family.Backend != "" {
		body["backend"] = w.Family.Backend
	}
	return body
}

// backendName is a family's Backend as the state names it.
func backendName(b string) string {
	if b == "" {
		return "local"
	}
	return b
}

// noRepository marks a registered folder that holds no repository.
const noRepository = " (no repository)"

// observeWorkspaces reads the boxes and their folders through browse, and
// the writer's workspaces from the state.
func observeWorkspaces(ctx context.Context, w *Writer, st HubState) (Model, error) {
	m := Model{}
	boxes, err := w.Client.BrowseOn(ctx, w.Family.Backend, w.Root)
	if err != nil {
		return nil, err
	}
	for _, b := range boxes {
		m["box "+b.Name] = ""
		dirs, err := w.Client.BrowseOn(ctx, w.Family.Backend, filepath.Join(w.Root, b.Name))
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			v := ""
			if d.RegisteredID != "" {
				v = "registered=" + d.RegisteredID + " name=" + d.DisplayName
				if !d.Git {
					v += noRepository
				}
			}
			m["dir "+b.Name+"/"+d.Name] = v
		}
	}
	for _, ws := range st.Workspaces {
		if within(ws.Path, w.Root) && ws.Backend == backendName(w.Family.Backend) {
			rel, _ := filepath.Rel(w.Root, ws.Path)
			m["workspace "+ws.ID] = "path=" + rel + " name=" + ws.DisplayName
		}
	}
	return m, nil
}
