package service

import (
	"path"
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// mintID returns a new workspace id for a folder: its readable base, with
// -2, -3, ... appended when an id was ever used, so an id never names two
// folders over the workspace registry's life.
func mintID(tx reads, dir string) (string, error) {
	base := idBase(dir)
	for n := 1; ; n++ {
		id := base
		if n > 1 {
			id = base + "-" + strconv.Itoa(n)
		}
		used, err := tx.WorkspaceIDUsed(id)
		if err != nil {
			return "", err
		}
		if !used {
			return id, nil
		}
	}
}

// workspacesAtOrBelow returns the registered workspaces on backend whose
// folders are root or inside it, in registration order.
func workspacesAtOrBelow(tx reads, backend, root string) ([]hub.Workspace, error) {
	all, err := tx.Workspaces()
	if err != nil {
		return nil, err
	}
	var ws []hub.Workspace
	for _, w := range all {
		if w.Backend == backend && atOrBelow(w.Path, root) {
			ws = append(ws, w)
		}
	}
	return ws, nil
}

// workspaceAt returns the workspace registered exactly at p on backend,
// if any.
func workspaceAt(tx reads, backend, p string) (hub.Workspace, bool, error) {
	all, err := tx.Workspaces()
	if err != nil {
		return hub.Workspace{}, false, err
	}
	for _, w := range all {
		if w.Backend == backend && w.Path == p {
			return w, true, nil
		}
	}
	return hub.Workspace{}, false, nil
}

// maxIDBase bounds the folder-derived part of a workspace id, so ids stay
// readable in URLs and socket names.
const maxIDBase = 48

// idBase derives the readable base of a workspace id from a folder's base
// name: lower case, every run of characters outside [a-z0-9] turned into
// one '-', no '-' at either end, at most 48 characters; "workspace" when
// nothing is left. mintID adds a numeric suffix when the base was used.
func idBase(dir string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(path.Base(dir)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= maxIDBase {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "workspace"
	}
	return b.String()
}
