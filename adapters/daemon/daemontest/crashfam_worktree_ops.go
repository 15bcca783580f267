package daemontest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The worktrees family's operations (crashfam_worktrees.go): each op,
// how its answer changes the model, and what it may have done unseen.

// worktreeAnswer is the part of a worktree operation's answer the
// family reads.
type worktreeAnswer struct {
	OK       bool            `json:"ok"`
	Checkout *worktreeSeen   `json:"checkout"`
	Error    *worktreeRefuse `json:"error"`
	// Preflight only.
	LocalData *struct {
		Fingerprint string `json:"fingerprint"`
	} `json:"localData"`
}

// worktreeSeen is a checkout as the API describes it.
type worktreeSeen struct {
	CheckoutID   string  `json:"checkoutId"`
	WorkspaceID  string  `json:"workspaceId"`
	Path         string  `json:"path"`
	Branch       *string `json:"branch"`
	Main         bool    `json:"main"`
	Ownership    string  `json:"ownership"`
	Availability string  `json:"availability"`
	Registered   bool    `json:"registered"`
}

// worktreeRefuse is a refusal's code and message.
type worktreeRefuse struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// readAnswer decodes a worktree answer; a refusal is an error unless
// refusalOK.
func readAnswer(answer []byte, refusalOK bool) (worktreeAnswer, error) {
	var a worktreeAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return a, fmt.Errorf("answer %q: %w", answer, err)
	}
	if !a.OK && !refusalOK {
		return a, fmt.Errorf("refused: %s", answer)
	}
	return a, nil
}

// treeBody is the body naming one tree of the writer's repository.
func treeBody(w *Writer, ref string) map[string]any {
	return map[string]any{"sourceWorkspaceId": mainID(w.Model), "reference": ref}
}

// addTree records tree folder, registered as ws (or "-") with its
// workspace fact.
func addTree(w *Writer, m Model, folder string, t treeState) {
	m["tree "+folder] = t.String()
	if t.ws != "-" {
		m["workspace "+t.ws] = fmt.Sprintf("tree=%s name=%s parent=%s", folder, t.branch, mainID(m))
	}
}

// createTreeOp creates a tree for branch, new, from main.
func createTreeOp(w *Writer, branch string) Op {
	folder := folderOf(branch)
	return Op{Name: "create", Method: "POST", Path: "api/hub/worktrees/create",
		Body: map[string]any{"sourceWorkspaceId": mainID(w.Model), "mode": "new-branch", "branch": branch,
			"base": map[string]string{"kind": "local", "ref": "main"}, "start": false},
		Acked: func(m Model, answer []byte) error {
			a, err := readAnswer(answer, false)
			if err != nil {
				return err
			}
			c := a.Checkout
			if c == nil || c.WorkspaceID == "" || c.Path != filepath.Join(treesDir(w), folder) || c.Ownership != "wharf" {
				return fmt.Errorf("create answer %q, want a registered tree of ours at %s", answer, folder)
			}
			m["branch "+branch] = ""
			addTree(w, m, folder, treeState{branch: branch, ws: c.WorkspaceID, owner: "wharf", availability: "present", files: "ok"})
			return nil
		},
		// A create cut by a kill may have made nothing, or a tree the
		// Hub registered (the create itself, or the recovery), perhaps
		// before its checkout ran; Observe registered one left waiting.
		// Its branch may exist without a tree. Anything else, an
		// external or unlisted tree, stays unexplained.
		Landed: func(m, obs Model) {
			if _, ok := obs["branch "+branch]; ok {
				m["branch "+branch] = ""
			}
			t, ok := parseTree(obs["tree "+folder])
			if !ok || t.branch != branch {
				return
			}
			m["tree "+folder] = obs["tree "+folder]
			if t.ws != "-" {
				m["workspace "+t.ws] = obs["workspace "+t.ws]
			}
		},
	}
}

// openTreeOp opens a registered tree, without starting it: it changes
// nothing, and must find the tree where the model has it.
func openTreeOp(w *Writer, folder string, state map[string]treeState) Op {
	t := state[folder]
	body := treeBody(w, t.ws)
	body["start"] = false
	return Op{Name: "open", Method: "POST", Path: "api/hub/worktrees/open", Body: body,
		Acked: func(_ Model, answer []byte) error {
			a, err := readAnswer(answer, false)
			if err == nil && (a.Checkout == nil || a.Checkout.WorkspaceID != t.ws) {
				err = fmt.Errorf("open answer %q, want workspace %s", answer, t.ws)
			}
			return err
		},
	}
}

// forgetTreeOp unregisters a tree; its files, branch and provenance
// stay, so it stays the Hub's.
func forgetTreeOp(w *Writer, folder string, state map[string]treeState) Op {
	t := state[folder]
	forget := func(m Model) {
		delete(m, "workspace "+t.ws)
		u := t
		u.ws = "-"
		m["tree "+folder] = u.String()
	}
	return Op{Name: "forget", Method: "POST", Path: "api/hub/worktrees/forget", Body: treeBody(w, t.ws),
		Acked: func(m Model, answer []byte) error {
			forget(m)
			_, err := readAnswer(answer, false)
			return err
		},
		Landed: func(m, _ Model) { forget(m) },
	}
}

// registerTreeOp registers a forgotten tree again, by its branch.
func registerTreeOp(w *Writer, folder string, state map[string]treeState) Op {
	t := state[folder]
	body := treeBody(w, t.branch)
	body["start"] = false
	return Op{Name: "register", Method: "POST", Path: "api/hub/worktrees/register", Body: body,
		Acked: func(m Model, answer []byte) error {
			a, err := readAnswer(answer, false)
			if err != nil {
				return err
			}
			if a.Checkout == nil || a.Checkout.WorkspaceID == "" || a.Checkout.Ownership != "wharf" {
				return fmt.Errorf("register answer %q, want our tree registered", answer)
			}
			u := t
			u.ws = a.Checkout.WorkspaceID
			addTree(w, m, folder, u)
			return nil
		},
		Landed: func(m, obs Model) {
			if u, ok := parseTree(obs["tree "+folder]); ok && u.ws != "-" {
				m["tree "+folder] = obs["tree "+folder]
				m["workspace "+u.ws] = obs["workspace "+u.ws]
			}
		},
	}
}

// preflightOp checks a tree for deletion, often after putting an
// untracked scratch file into it (local data a delete must confirm),
// and keeps the answer for the writer's next op, a delete.
func (wf *worktreeWriters) preflightOp(w *Writer, folder string, state map[string]treeState) (Op, error) {
	t := state[folder]
	if w.Rand.IntN(2) == 0 {
		name := w.NewName("scratch-") + ".txt"
		if err := os.WriteFile(filepath.Join(treesDir(w), folder, name), []byte("scratch\n"), 0o644); err != nil {
			return Op{}, err
		}
	}
	return Op{Name: "preflight", Method: "POST", Path: "api/hub/worktrees/preflight-delete", Body: treeBody(w, t.branch),
		Acked: func(_ Model, answer []byte) error {
			a, err := readAnswer(answer, false)
			if err != nil {
				return err
			}
			plan := &deletePlan{folder: folder, branch: t.branch}
			if a.LocalData != nil {
				plan.fingerprint = a.LocalData.Fingerprint
			}
			wf.mu.Lock()
			wf.plans[w] = plan
			wf.mu.Unlock()
			return nil
		},
	}, nil
}

// deleteBody is a confirmed delete of plan's tree with its fingerprint.
func deleteBody(w *Writer, plan *deletePlan) map[string]any {
	body := treeBody(w, plan.branch)
	body["confirm"] = true
	if plan.fingerprint != "" {
		body["localDataFingerprint"] = plan.fingerprint
	}
	return body
}

// removeTree drops every fact of the tree at folder but its branch.
func removeTree(m Model, folder string) {
	if t, ok := parseTree(m["tree "+folder]); ok && t.ws != "-" {
		delete(m, "workspace "+t.ws)
	}
	delete(m, "tree "+folder)
	for _, k := range m.Keys("guard " + folder + "/") {
		delete(m, k)
	}
}

// deleteTreeOp deletes a tree with the fingerprint its preflight gave,
// nothing changed since: its files, workspace and guards go, its
// branch stays.
func deleteTreeOp(w *Writer, plan *deletePlan) Op {
	return Op{Name: "delete", Method: "POST", Path: "api/hub/worktrees/delete", Body: deleteBody(w, plan),
		Acked: func(m Model, answer []byte) error {
			removeTree(m, plan.folder)
			_, err := readAnswer(answer, false)
			return err
		},
		Landed: func(m, _ Model) { removeTree(m, plan.folder) },
	}
}

// guardedDeleteOp puts a new untracked file into the tree after its
// preflight, then deletes with the preflight's fingerprint, which no
// longer matches: the answer must be local-data and the file must stay.
func guardedDeleteOp(w *Writer, plan *deletePlan) (Op, error) {
	name := w.NewName("guard-") + ".txt"
	if err := os.WriteFile(filepath.Join(treesDir(w), plan.folder, name), []byte("keep me\n"), 0o644); err != nil {
		return Op{}, err
	}
	w.Model["guard "+plan.folder+"/"+name] = ""
	return Op{Name: "guarded-delete", Method: "POST", Path: "api/hub/worktrees/delete", Body: deleteBody(w, plan),
		Acked: func(m Model, answer []byte) error {
			a, err := readAnswer(answer, true)
			switch {
			case err != nil:
				return err
			case a.OK:
				removeTree(m, plan.folder)
				return fmt.Errorf("a delete with a fingerprint taken before %s was written removed the tree %s", name, plan.folder)
			case a.Error == nil || a.Error.Code != "local-data":
				return fmt.Errorf("a delete with a stale fingerprint was refused as %s, want local-data", answer)
			}
			return nil
		},
		// No Landed: a delete whose fingerprint no longer matches never
		// removes anything, so it cannot have landed unseen.
	}, nil
}
