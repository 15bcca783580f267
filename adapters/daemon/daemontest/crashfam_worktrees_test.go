package daemontest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// worktreeWriter returns a writer of the worktrees family whose model
// holds the repository's workspace "repo", a registered tree t1 with a
// guarded file and a forgotten tree t2, both with their folders.
func worktreeWriter(t *testing.T) *Writer {
	t.Helper()
	w := &Writer{Family: WorktreeFamily(), Root: t.TempDir(), Model: Model{"main": "id=repo"}, Rand: rand.New(rand.NewPCG(1, 2))}
	addTree(w, w.Model, "t1", treeState{branch: "t1", ws: "t1", owner: "wharf", availability: "present", files: "ok"})
	addTree(w, w.Model, "t2", treeState{branch: "t2", ws: "-", owner: "wharf", availability: "present", files: "ok"})
	w.Model["branch t1"], w.Model["branch t2"] = "", ""
	w.Model["guard t1/guard-1.txt"] = ""
	w.seq = 1 // the names above are taken
	for _, f := range []string{"t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(treesDir(w), f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// with returns a copy of m with the facts of kv (key, value, …) set, a
// value "<gone>" deleting its key.
func with(m Model, kv ...string) Model {
	c := maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<gone>" {
			delete(c, kv[i])
		} else {
			c[kv[i]] = kv[i+1]
		}
	}
	return c
}

// TestAWorktreeWriterJudgesWhatAKillLeft drives one writer's
// verification with one of the family's ops cut by a kill and a fixed
// observation: each case is an outcome a restart may show, and what the
// crash load reports of it.
func TestAWorktreeWriterJudgesWhatAKillLeft(t *testing.T) {
	const t9 = "branch=t9 ws=t9 owner=wharf present files=ok"
	const ws9 = "tree=t9 name=t9 parent=repo"
	create := func(w *Writer) (Op, error) { return createTreeOp(w, "t9"), nil }
	del := func(w *Writer) (Op, error) {
		return deleteTreeOp(w, &deletePlan{folder: "t1", branch: "t1", fingerprint: strings.Repeat("a", 64)}), nil
	}
	guarded := func(w *Writer) (Op, error) { return guardedDeleteOp(w, &deletePlan{folder: "t1", branch: "t1"}) } // writes guard-2.txt
	gone := func(m Model, keys ...string) Model {
		for _, k := range keys {
			delete(m, k)
		}
		return m
	}
	for _, tc := range []struct {
		name             string
		op               func(w *Writer) (Op, error)
		obs              func(m Model) Model // from the model once the op is made
		lost, unexpected int
		landed           bool
	}{
		{name: "a cut create that made nothing", op: create, obs: func(m Model) Model { return m }},
		{name: "a cut create the recovery registered", op: create, landed: true,
			obs: func(m Model) Model { return with(m, "tree t9", t9, "workspace t9", ws9, "branch t9", "") }},
		{name: "a cut create registered before its checkout ran", op: create, landed: true, obs: func(m Model) Model {
			return with(m, "tree t9", strings.Replace(t9, "files=ok", "files=unchecked", 1), "workspace t9", ws9, "branch t9", "")
		}},
		{name: "a cut create left waiting, registered by Observe", op: create, landed: true,
			obs: func(m Model) Model { return with(m, "tree t9", t9, "workspace t9", ws9, "branch t9", "") }},
		{name: "a cut create that made its branch only", op: create, landed: true,
			obs: func(m Model) Model { return with(m, "branch t9", "") }},
		{name: "a cut create whose tree the Hub does not own", op: create, unexpected: 2, landed: true, obs: func(m Model) Model {
			return with(m, "tree t9", strings.Replace(t9, "owner=wharf", "owner=external", 1), "workspace t9", ws9, "branch t9", "")
		}},
		{name: "a cut create whose tree could not be registered", op: create, unexpected: 1, landed: true, obs: func(m Model) Model {
			return with(m, "tree t9", "branch=t9 ws=- owner=external(unregistrable:identity-uncertain) present files=ok", "branch t9", "")
		}},
		{name: "a cut create that left a folder git does not list", op: create, unexpected: 1,
			obs: func(m Model) Model { return with(m, "tree t9", "unlisted folder") }},
		{name: "a cut delete that removed its tree", op: del, landed: true,
			obs: func(m Model) Model { return gone(m, "tree t1", "workspace t1", "guard t1/guard-1.txt") }},
		{name: "a cut delete that removed nothing", op: del, obs: func(m Model) Model { return m }},
		{name: "a cut delete that left a registration on a missing tree", op: del, lost: 2, obs: func(m Model) Model {
			return gone(with(m, "tree t1", "branch=t1 ws=t1 owner=wharf missing files=unchecked"), "guard t1/guard-1.txt")
		}},
		{name: "a cut delete that left a folder git does not list", op: del, lost: 1,
			obs: func(m Model) Model { return with(m, "tree t1", "unlisted folder") }},
		{name: "a cut delete that took the branch", op: del, lost: 1, landed: true,
			obs: func(m Model) Model { return gone(m, "tree t1", "workspace t1", "guard t1/guard-1.txt", "branch t1") }},
		{name: "a cut guarded delete that removed the tree", op: guarded, lost: 4, obs: func(m Model) Model {
			return gone(m, "tree t1", "workspace t1", "guard t1/guard-1.txt", "guard t1/guard-2.txt")
		}},
		{name: "a cut guarded delete that removed nothing", op: guarded, obs: func(m Model) Model { return m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			w := worktreeWriter(t)
			op, err := tc.op(w)
			is.NoErr(err) // the op is made
			obs := tc.obs(maps.Clone(w.Model))
			w.Family.Observe = func(context.Context, *Writer, HubState) (Model, error) { return maps.Clone(obs), nil }
			w.pending = &op
			v, err := w.verify(t.Context(), HubState{})
			is.NoErr(err)                              // observed
			is.Equal(len(v.lost), tc.lost)             // lost facts
			is.Equal(len(v.unexpected), tc.unexpected) // unexpected facts
			is.Equal(v.landed, tc.landed)              // whether the cut op is judged landed
		})
	}
}

// TestAGuardedDeleteMustBeRefusedAsLocalData checks the answers to a
// delete sent with a fingerprint taken before the guard file was
// written: only a local-data refusal keeps the model as it was.
func TestAGuardedDeleteMustBeRefusedAsLocalData(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		fails, kept  bool
	}{
		{name: "refused as local-data", answer: `{"ok":false,"operationId":"o","kind":"delete","error":{"code":"local-data","message":"m","retry":"refresh"}}`, kept: true},
		{name: "refused otherwise", answer: `{"ok":false,"operationId":"o","kind":"delete","error":{"code":"git-lock","message":"m","retry":"none"}}`, fails: true, kept: true},
		{name: "done", answer: `{"ok":true,"operationId":"o","kind":"delete","registered":false,"started":false}`, fails: true},
		{name: "not JSON", answer: `<html>`, fails: true, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			w := worktreeWriter(t)
			op, err := guardedDeleteOp(w, &deletePlan{folder: "t1", branch: "t1", fingerprint: strings.Repeat("b", 64)})
			is.NoErr(err) // made
			guards := w.Model.Keys("guard t1/")
			is.Equal(len(guards), 2) // the new guard is a fact
			_, err = os.Stat(filepath.Join(treesDir(w), "t1", strings.TrimPrefix(guards[1], "guard t1/")))
			is.NoErr(err)                                                                       // and a file in the tree
			is.Equal(op.Body.(map[string]any)["localDataFingerprint"], strings.Repeat("b", 64)) // sent with the old fingerprint
			is.True(op.Landed == nil)                                                           // it cannot land unseen
			err = op.Acked(w.Model, []byte(tc.answer))
			is.Equal(err != nil, tc.fails) // judged
			_, kept := w.Model["tree t1"]
			is.Equal(kept, tc.kept) // the tree stays in the model unless the answer says it went
		})
	}
}

// TestATreeFactSaysWhatTheDiskHolds reads a listed checkout into its
// fact, and the fact back.
func TestATreeFactSaysWhatTheDiskHolds(t *testing.T) {
	dir := t.TempDir()
	checkedOut := filepath.Join(dir, "a")
	is.New(t).NoErr(os.MkdirAll(checkedOut, 0o755))
	is.New(t).NoErr(os.WriteFile(filepath.Join(checkedOut, trackedFile), nil, 0o644))
	branch := "feature/a"
	for _, tc := range []struct {
		name string
		c    worktreeSeen
		fact string
		ours bool
	}{
		{name: "a registered tree checked out", fact: "branch=feature/a ws=w1 owner=wharf present files=ok", ours: true,
			c: worktreeSeen{Path: checkedOut, Branch: &branch, Ownership: "wharf", Availability: "present", Registered: true, WorkspaceID: "w1"}},
		{name: "a forgotten tree never checked out", fact: "branch=feature/a ws=- owner=wharf present files=unchecked", ours: true,
			c: worktreeSeen{Path: filepath.Join(dir, "b"), Branch: &branch, Ownership: "wharf", Availability: "present"}},
		{name: "an external tree", fact: "branch=feature/a ws=- owner=external present files=ok",
			c: worktreeSeen{Path: checkedOut, Branch: &branch, Ownership: "external", Availability: "present"}},
		{name: "a missing tree", fact: "branch=feature/a ws=w1 owner=wharf missing files=unchecked",
			c: worktreeSeen{Path: filepath.Join(dir, "gone"), Branch: &branch, Ownership: "wharf", Availability: "missing", Registered: true, WorkspaceID: "w1"}},
		{name: "a detached tree", fact: "branch= ws=- owner=wharf present files=ok",
			c: worktreeSeen{Path: checkedOut, Ownership: "wharf", Availability: "present"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(checkoutFact(tc.c), tc.fact) // the fact
			ts, ours := parseTree(tc.fact)
			is.Equal(ours, tc.ours) // a tree the writer acts on
			if ours {
				is.Equal(ts.String(), tc.fact) // read back whole
			}
		})
	}
	_, ours := parseTree("unlisted folder")
	is.New(t).True(!ours) // a folder git does not list is no tree
}

// TestAFolderIsNamedAfterItsBranch checks folderOf on the writer's
// kinds of branch, as the Hub names their folders.
func TestAFolderIsNamedAfterItsBranch(t *testing.T) {
	is := is.New(t)
	is.Equal(folderOf("t3"), "t3")                 // as it is
	is.Equal(folderOf("feature/t3"), "feature-t3") // a slash becomes a dash
	is.Equal(folderOf("Fix-3"), "fix-3")           // lower-cased
}

// TestObservingTheTreesRegistersOnlyTheUnknownOnes runs Observe against
// a canned inventory on loopback and a trees folder on disk: it reads
// every tree, guard, branch and workspace, reports a folder git does not
// list, and registers the one listed tree the model does not know, and
// that one only.
func TestObservingTheTreesRegistersOnlyTheUnknownOnes(t *testing.T) {
	for _, tc := range []struct {
		name, register, t3 string
		noted              int // the retry's note, and the unchecked tree's
	}{
		{name: "the retry registers it", noted: 1,
			register: `{"ok":true,"operationId":"o","kind":"register","checkout":{"checkoutId":"c3","path":"%s","branch":"t3","ownership":"wharf","availability":"present","registered":true,"workspaceId":"t3"}}`,
			t3:       "branch=t3 ws=t3 owner=wharf present files=unchecked"},
		{name: "the retry is refused",
			register: `{"ok":false,"operationId":"o","kind":"register","error":{"code":"identity-uncertain","message":"m","retry":"refresh"}}`,
			t3:       "branch=t3 ws=- owner=external(unregistrable:identity-uncertain) present files=unchecked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			w := worktreeWriter(t)
			w.notes = &notes{n: map[string]int{}}
			dir := treesDir(w)
			for _, p := range []string{"t1/" + trackedFile, "t1/guard-1.txt", "t2/" + trackedFile, "x/guard-7.txt"} {
				is.NoErr(os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				is.NoErr(os.WriteFile(filepath.Join(dir, p), nil, 0o644))
			}
			is.NoErr(os.MkdirAll(filepath.Join(dir, "t3"), 0o755)) // made, never checked out
			var mu sync.Mutex
			var registered []any // the references registered, by the server's goroutine
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				switch r.Method + " " + r.URL.Path {
				case "GET /api/hub/worktrees":
					fmt.Fprintf(rw, `{"inventory":{"status":"ready","refs":{"local":["main","t1","t2","t3"]},"checkouts":[
						{"path":%q,"branch":"main","main":true,"ownership":"main","availability":"present","registered":true,"workspaceId":"repo"},
						{"path":%q,"branch":"t1","ownership":"wharf","availability":"present","registered":true,"workspaceId":"t1"},
						{"path":%q,"branch":"t2","ownership":"wharf","availability":"present","registered":false},
						{"checkoutId":"c3","path":%q,"branch":"t3","ownership":"external","availability":"present","registered":false}]}}`,
						mainRepo(w), filepath.Join(dir, "t1"), filepath.Join(dir, "t2"), filepath.Join(dir, "t3"))
				case "POST /api/hub/worktrees/register":
					var body map[string]any
					_ = json.NewDecoder(r.Body).Decode(&body)
					mu.Lock()
					registered = append(registered, body["reference"])
					mu.Unlock()
					fmt.Fprint(rw, strings.ReplaceAll(tc.register, "%s", filepath.Join(dir, "t3")))
				default:
					http.NotFound(rw, r)
				}
			}))
			defer srv.Close()
			w.Client = &Client{HTTP: srv.Client(), Base: srv.URL + "/"}
			st := HubState{Workspaces: []Workspace{{ID: "repo", Path: mainRepo(w)},
				{ID: "t1", Path: filepath.Join(dir, "t1"), DisplayName: "t1", ParentID: "repo"}}}
			m, err := w.Family.Observe(t.Context(), w, st)
			is.NoErr(err) // observed
			mu.Lock()
			is.Equal(registered, []any{"c3"}) // only the unknown tree was registered, by its checkout id
			mu.Unlock()
			is.Equal(m["tree t1"], w.Model["tree t1"])                                                      // the registered tree as the model has it
			is.Equal(m["tree t2"], w.Model["tree t2"])                                                      // the forgotten one, left forgotten
			is.Equal(m["tree t3"], tc.t3)                                                                   // the unknown one, after the retry
			is.Equal(m["tree x"], "unlisted folder")                                                        // a folder git does not list
			is.Equal(m["main"], "id=repo")                                                                  // the repository's workspace
			is.Equal(m["workspace t1"], w.Model["workspace t1"])                                            // the tree's workspace, from the state
			is.Equal(len(m.Keys("guard ")), 2)                                                              // the guards on disk
			is.Equal(len(m.Keys("branch ")), 3)                                                             // the branches but main
			is.Equal(w.notes.n["worktrees: trees a restart left waiting, registered by a retry"], tc.noted) // noted
			is.Equal(w.notes.n["worktrees: trees registered before their checkout ran"], tc.noted)          // and its missing checkout
		})
	}
}
