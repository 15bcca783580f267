package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultFamilies returns the built-in crash-load families: plain
// folders, workspaces (registrations and journaled folder renames),
// display names, personal state, credentials (tokens and their
// assignments), clone jobs, worktrees and push deliveries.
func DefaultFamilies() []*Family {
	return []*Family{FolderFamily(), WorkspaceFamily(), DisplayNameFamily(), PersonalStateFamily(), CredentialFamily(),
		CloneFamily(), WorktreeFamily(), PushFamily()}
}

// FolderFamily creates, renames and removes plain folders (no workspace
// at or below them) in the writer's root: each is one directory operation,
// without a journal. Its facts are "folder <name>" → "".
func FolderFamily() *Family {
	return &Family{Name: "folders", Next: nextFolderOp, Observe: observeFolders}
}

// folderPrefixes vary the new names: spaces and non-ASCII letters are
// ordinary folder names.
var folderPrefixes = []string{"f", "Folder ", "dossier-é"}

func nextFolderOp(w *Writer) (Op, error) {
	folders := w.Model.Keys("folder ")
	choice := w.Rand.IntN(10)
	switch {
	case len(folders) == 0 || len(folders) < 6 && choice < 5:
		name := w.NewName(folderPrefixes[w.Rand.IntN(len(folderPrefixes))])
		add := func(m Model) { m["folder "+name] = "" }
		return Op{Name: "create", Method: "POST", Path: "api/hub/folders/create",
			Body: map[string]string{"parent": w.Root, "name": name},
			Acked: func(m Model, answer []byte) error {
				add(m)
				return answerPath(answer, filepath.Join(w.Root, name))
			},
			Landed: func(m, _ Model) { add(m) },
		}, nil
	case choice < 8:
		old := strings.TrimPrefix(folders[w.Rand.IntN(len(folders))], "folder ")
		name := w.NewName(folderPrefixes[w.Rand.IntN(len(folderPrefixes))])
		rename := func(m Model) {
			delete(m, "folder "+old)
			m["folder "+name] = ""
		}
		return Op{Name: "rename", Method: "POST", Path: "api/hub/folders/rename",
			Body: map[string]string{"path": filepath.Join(w.Root, old), "name": name},
			Acked: func(m Model, answer []byte) error {
				rename(m)
				return answerPath(answer, filepath.Join(w.Root, name))
			},
			Landed: func(m, _ Model) { rename(m) },
		}, nil
	default:
		old := strings.TrimPrefix(folders[w.Rand.IntN(len(folders))], "folder ")
		remove := func(m Model) { delete(m, "folder "+old) }
		return Op{Name: "remove", Method: "POST", Path: "api/hub/folders/remove",
			Body: map[string]string{"path": filepath.Join(w.Root, old)},
			Acked: func(m Model, answer []byte) error {
				remove(m)
				return answerPath(answer, filepath.Join(w.Root, old))
			},
			Landed: func(m, _ Model) { remove(m) },
		}, nil
	}
}

// observeFolders lists the writer's root through GET /api/hub/browse. A
// plain folder's fact is ""; a repository or a registration there, which
// this family never makes, shows in its value.
func observeFolders(ctx context.Context, w *Writer, _ HubState) (Model, error) {
	entries, err := w.Client.Browse(ctx, w.Root)
	if err != nil {
		return nil, err
	}
	m := Model{}
	for _, e := range entries {
		v := ""
		if e.Git || e.RegisteredID != "" {
			v = fmt.Sprintf("git=%v registered=%s", e.Git, e.RegisteredID)
		}
		m["folder "+e.Name] = v
	}
	return m, nil
}

// answerPath checks that an answer's "path" is want.
func answerPath(answer []byte, want string) error {
	var res struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(answer, &res); err != nil {
		return fmt.Errorf("answer %q: %w", answer, err)
	}
	if res.Path != want {
		return fmt.Errorf("the answer names %s, want %s", res.Path, want)
	}
	return nil
}
