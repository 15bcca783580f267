package httpapi

import (
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

type browseEntry struct {
	Name         string  `json:"name"`
	Git          bool    `json:"git"`
	RegisteredID *string `json:"registeredId"`
	DisplayName  *string `json:"displayName"`
	Running      bool    `json:"running"`
}

type browseResult struct {
	Path   string        `json:"path"`
	Parent *string       `json:"parent"`
	Dirs   []browseEntry `json:"dirs"`
}

type createFolderRequest struct {
	Parent  string `json:"parent"`
	Name    string `json:"name"`
	Backend string `json:"backend"`
}

type renameFolderRequest struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Stop    bool   `json:"stop"`
	Backend string `json:"backend"`
}

type removeFolderRequest struct {
	Path    string `json:"path"`
	Stop    bool   `json:"stop"`
	Backend string `json:"backend"`
}

type folderPath struct {
	Path string `json:"path"`
}

type renameFolderResult struct {
	Path         string   `json:"path"`
	WorkspaceIDs []string `json:"workspaceIds"`
}

type removeFolderResult struct {
	Path        string `json:"path"`
	WorkspaceID string `json:"workspaceId,omitempty"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (a *api) handleBrowse(w http.ResponseWriter, r *http.Request, _ caller) error {
	q := r.URL.Query()
	if _, given := q["path"]; given && q.Get("path") == "" {
		return hub.Errorf(hub.Invalid, "path must be absolute")
	}
	if _, given := q["backend"]; given && q.Get("backend") == "" {
		return hub.Errorf(hub.Invalid, "backend must be local or ssh:<host name>")
	}
	res, err := a.folders.Browse(r.Context(), q.Get("backend"), q.Get("path"))
	if err != nil {
		return err
	}
	out := browseResult{Path: res.Path, Parent: optional(res.Parent), Dirs: make([]browseEntry, len(res.Dirs))}
	for i, d := range res.Dirs {
		out.Dirs[i] = browseEntry{Name: d.Name, Git: d.Git, RegisteredID: optional(d.RegisteredID),
			DisplayName: optional(d.DisplayName), Running: d.Running}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) handleCreateFolder(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req createFolderRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	p, err := a.folders.CreateFolder(r.Context(), req.Backend, req.Parent, req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, folderPath{Path: p})
	return nil
}

func (a *api) handleRenameFolder(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req renameFolderRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	res, err := a.folders.RenameFolder(r.Context(), req.Backend, req.Path, req.Name, req.Stop)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renameFolderResult{Path: res.Path, WorkspaceIDs: res.WorkspaceIDs})
	return nil
}

func (a *api) handleRemoveFolder(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req removeFolderRequest
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	res, err := a.folders.RemoveFolder(r.Context(), req.Backend, req.Path, req.Stop)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, removeFolderResult{Path: res.Path, WorkspaceID: res.WorkspaceID})
	return nil
}
