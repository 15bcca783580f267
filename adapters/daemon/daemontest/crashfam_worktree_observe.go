package daemontest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// What the worktrees family observes after a restart
// (crashfam_worktrees.go): the inventory, the trees folder on disk and
// the registry, in the model's terms.

// observe reads the repository's trees from the inventory, the disk and
// the registry; it registers a tree a cut create left waiting (see
// WorktreeFamily).
func (wf *worktreeWriters) observe(ctx context.Context, w *Writer, st HubState) (Model, error) {
	m := Model{}
	dir := treesDir(w)
	var mainWS string
	for _, ws := range st.Workspaces {
		switch {
		case ws.Path == mainRepo(w):
			mainWS = ws.ID
			m["main"] = "id=" + ws.ID
		case within(ws.Path, dir):
			rel, _ := filepath.Rel(dir, ws.Path)
			m["workspace "+ws.ID] = fmt.Sprintf("tree=%s name=%s parent=%s", rel, ws.DisplayName, ws.ParentID)
		}
	}
	if mainWS == "" {
		return m, nil // the main workspace is lost: nothing else can be read
	}
	inv, err := wf.inventory(ctx, w, mainWS)
	if err != nil {
		return nil, err
	}
	for _, b := range inv.Refs.Local {
		if b != "main" {
			m["branch "+b] = ""
		}
	}
	listed := map[string]bool{}
	for _, c := range inv.Checkouts {
		if c.Main {
			continue
		}
		folder, err := filepath.Rel(dir, c.Path)
		if err != nil || strings.Contains(folder, "/") || strings.HasPrefix(folder, "..") {
			folder = c.Path // a tree outside the trees folder
		}
		listed[folder] = true
		known, wasKnown := w.Model["tree "+folder]
		if !c.Registered && c.Availability == "present" && !wasKnown {
			if c, err = retryRegister(ctx, w, mainWS, c); err != nil {
				return nil, err
			}
		}
		m["tree "+folder] = checkoutFact(c)
		if t, ok := parseTree(m["tree "+folder]); ok && t.files == "unchecked" && !strings.HasSuffix(known, " files=unchecked") {
			w.Note("trees registered before their checkout ran")
		}
		if c.Registered {
			if _, ok := m["workspace "+c.WorkspaceID]; !ok { // registered in the inventory, not in the state
				m["workspace "+c.WorkspaceID] = "inventory only"
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			m["tree "+e.Name()] = "unlisted folder"
		}
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // a file, or a folder going away: its tree fact says
		}
		for _, f := range files {
			if strings.HasPrefix(f.Name(), "guard-") {
				m["guard "+e.Name()+"/"+f.Name()] = ""
			}
		}
	}
	return m, nil
}

// worktreeInventory is the part of GET /api/hub/worktrees the family
// reads.
type worktreeInventory struct {
	Status    string         `json:"status"`
	Checkouts []worktreeSeen `json:"checkouts"`
	Refs      struct {
		Local []string `json:"local"`
	} `json:"refs"`
}

// inventory reads the repository's inventory; one not ready is an
// error, since the repository is the writer's own.
func (wf *worktreeWriters) inventory(ctx context.Context, w *Writer, mainWS string) (worktreeInventory, error) {
	var res struct {
		Inventory worktreeInventory `json:"inventory"`
	}
	if err := w.Call(ctx, "GET", "api/hub/worktrees?source="+url.QueryEscape(mainWS), nil, &res); err != nil {
		return worktreeInventory{}, err
	}
	if res.Inventory.Status != "ready" {
		return worktreeInventory{}, fmt.Errorf("the inventory of %s is %s", mainRepo(w), res.Inventory.Status)
	}
	return res.Inventory, nil
}

// retryRegister registers a tree the model does not know, by its
// checkout id, and returns it as registered; a refusal is kept in the
// checkout's ownership, so the fact shows it.
func retryRegister(ctx context.Context, w *Writer, mainWS string, c worktreeSeen) (worktreeSeen, error) {
	var a worktreeAnswer
	status, body, err := w.Client.Do(ctx, "POST", "api/hub/worktrees/register",
		map[string]any{"sourceWorkspaceId": mainWS, "reference": c.CheckoutID, "start": false}, &a)
	switch {
	case err != nil:
		return c, err
	case status != 200:
		return c, fmt.Errorf("register a retained tree: %d %s", status, body)
	case !a.OK || a.Checkout == nil:
		code := "?"
		if a.Error != nil {
			code = a.Error.Code
		}
		c.Ownership += "(unregistrable:" + code + ")"
		return c, nil
	}
	w.Note("trees a restart left waiting, registered by a retry")
	return *a.Checkout, nil
}

// checkoutFact is a listed tree's fact.
func checkoutFact(c worktreeSeen) string {
	t := treeState{ws: "-", owner: c.Ownership, availability: c.Availability, files: "unchecked"}
	if c.Branch != nil {
		t.branch = *c.Branch
	}
	if c.Registered {
		t.ws = c.WorkspaceID
	}
	if _, err := os.Lstat(filepath.Join(c.Path, trackedFile)); err == nil {
		t.files = "ok"
	}
	return t.String()
}
