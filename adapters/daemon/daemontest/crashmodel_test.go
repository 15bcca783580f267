package daemontest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestVerify drives one writer's verification with a fixed observation:
// what it calls lost, unexpected or landed decides what the crash load
// reports, so each case is a judgement the harness must get right.
func TestVerify(t *testing.T) {
	acked := Model{"folder a": "", "folder b": ""}
	create := &Op{Name: "create", Landed: func(m, _ Model) { m["folder c"] = "" }}
	rename := &Op{Name: "rename", Landed: func(m, _ Model) { delete(m, "folder b"); m["folder d"] = "" }}
	for _, tc := range []struct {
		name             string
		pending          *Op
		obs              Model
		lost, unexpected int
		landed           bool
		pendingName      string
	}{
		{name: "everything there", obs: Model{"folder a": "", "folder b": ""}},
		{name: "a cut create that did not land", pending: create, obs: Model{"folder a": "", "folder b": ""}, pendingName: "create"},
		{name: "a cut create that landed", pending: create, obs: Model{"folder a": "", "folder b": "", "folder c": ""},
			landed: true, pendingName: "create"},
		{name: "an acknowledged fact missing", obs: Model{"folder a": ""}, lost: 1},
		{name: "an acknowledged fact changed", obs: Model{"folder a": "", "folder b": "git=true"}, lost: 1},
		{name: "a fact nothing explains", obs: Model{"folder a": "", "folder b": "", "folder z": ""}, unexpected: 1},
		{name: "a cut create does not excuse a lost fact", pending: create, obs: Model{"folder a": "", "folder c": ""},
			lost: 1, landed: true, pendingName: "create"},
		{name: "a cut rename half done is no outcome", pending: rename, obs: Model{"folder a": "", "folder b": "", "folder d": ""},
			unexpected: 1, pendingName: "rename"},
		{name: "a cut op without Landed excuses nothing", pending: &Op{Name: "remove"}, obs: Model{"folder a": ""},
			lost: 1, pendingName: "remove"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			fam := &Family{Name: "test", Observe: func(context.Context, *Writer, HubState) (Model, error) { return maps.Clone(tc.obs), nil }}
			w := &Writer{Family: fam, Model: maps.Clone(acked), pending: tc.pending}
			v, err := w.verify(t.Context(), HubState{})
			is.NoErr(err)                              // observed
			is.Equal(len(v.lost), tc.lost)             // lost facts
			is.Equal(len(v.unexpected), tc.unexpected) // unexpected facts
			is.Equal(v.landed, tc.landed)              // whether the cut op landed
			is.Equal(v.pending, tc.pendingName)        // which op was cut
			is.Equal(w.Model, tc.obs)                  // the model follows what was observed
			is.True(w.pending == nil)                  // and the cut op is judged once
		})
	}
}

func TestCrashConfigParse(t *testing.T) {
	is := is.New(t)
	var c CrashConfig
	is.NoErr(c.Parse(""))                                                   // nothing to set
	is.NoErr(c.Parse("kills=200, writers=3,seed=42,uptime=1s,timeout=30s")) // every key
	is.Equal(c, CrashConfig{Kills: 200, Writers: 3, Seed: 42, MeanUptime: time.Second, RequestTimeout: 30 * time.Second})
	is.True(c.Parse("kills") != nil)      // not key=value
	is.True(c.Parse("acks=3") != nil)     // an unknown key
	is.True(c.Parse("kills=many") != nil) // a bad number
}

// TestCrashConfigParseSelectsFamilies selects built-in families by name,
// and sizes the worktrees family's repository.
func TestCrashConfigParseSelectsFamilies(t *testing.T) {
	names := func(fams []*Family) (out []string) {
		for _, f := range fams {
			out = append(out, f.Name)
		}
		return out
	}
	is := is.New(t)
	var c CrashConfig
	is.NoErr(c.Parse("families=worktrees+folders"))               // two families
	is.Equal(names(c.Families), []string{"worktrees", "folders"}) // in order
	before := c.Families[0]
	is.NoErr(c.Parse("worktree-files=100"))                       // a bigger repository
	is.Equal(names(c.Families), []string{"worktrees", "folders"}) // the same families
	is.True(c.Families[0] != before)                              // the worktrees one replaced

	var d CrashConfig
	is.NoErr(d.Parse("worktree-files=0"))                           // with the default families
	is.Equal(names(d.Families), names(DefaultFamilies()))           // all of them
	is.True(d.Parse("families=weather") != nil)                     // an unknown family
	is.True(d.Parse("families=folders,worktree-files=10") != nil)   // a size for a family not run
	is.True(d.Parse("families=worktrees,worktree-files=-1") != nil) // a negative size
}

// TestNextChoicesAreValid runs every built-in family's Next, without a
// daemon, on a model that holds what each of its operations needs (a
// folder to rename, a registered workspace to forget): each op must name
// a request, and every kind of op the family has must come up.
func TestNextChoicesAreValid(t *testing.T) {
	kinds := map[string][]string{
		"folders":        {"create", "rename", "remove"},
		"workspaces":     {"register", "configure", "create", "rename", "forget", "remove"},
		"display-names":  {"set"},
		"personal-state": {"patch"},
		"credentials":    {"create", "assign", "unassign", "delete"},
		"clones":         {"clone", "cancel"},
		"worktrees":      {"create", "open", "forget", "register", "preflight", "delete", "guarded-delete"},
		"push":           {"turn", "watch"},
	}
	for _, fam := range DefaultFamilies() {
		t.Run(fam.Name, func(t *testing.T) {
			is := is.New(t)
			w := &Writer{Family: fam, Root: t.TempDir(), Model: Model{}, Rand: rand.New(rand.NewPCG(1, 2))}
			switch fam.Name {
			case "folders":
				w.Model["folder f1"] = ""
			case "workspaces":
				is.NoErr(fam.Setup(t.Context(), w)) // boxes on disk
				box := strings.TrimPrefix(w.Model.Keys("box ")[0], "box ")
				addWorkspace(w.Model, "x", box+"/w1", "w1")
			case "display-names":
				w.Model["workspace x"] = "name=x"
			case "personal-state":
				w.Model["state x"] = "{}"
			case "worktrees":
				w.Model["main"] = "id=repo"
				for i, ws := range []string{"t1", "-"} {
					folder := fmt.Sprintf("t%d", i+1)
					addTree(w, w.Model, folder, treeState{branch: folder, ws: ws, owner: "wharf", availability: "present", files: "ok"})
					is.NoErr(os.MkdirAll(filepath.Join(treesDir(w), folder), 0o755)) // its folder
				}
			case "push":
				w.Model["conversation c1"] = ""
			case "credentials":
				w.Model["workspace x"] = ""
				w.Model["credential c1"] = "id=1 host=git.example.com"
				w.Model["assignment x git.example.com"] = "c1"
			}
			seen := map[string]bool{}
			for range 200 {
				op, err := fam.Next(w)
				is.NoErr(err)                               // an op
				is.True(op.Name != "" && op.Method != "")   // named, with a method
				is.True(op.Path != "" && op.Path[0] != '/') // and a relative path
				seen[op.Name] = true
				if fam.Name == "clones" && op.Name == "clone" {
					is.NoErr(op.Acked(w.Model, []byte(`{"jobId":"j1"}`))) // acknowledged, so its cancel follows
				}
				if fam.Name == "worktrees" && op.Name == "preflight" {
					is.NoErr(op.Acked(w.Model, []byte(`{"ok":true,"requiresStop":false}`))) // acknowledged, so its delete follows
				}
			}
			for _, k := range kinds[fam.Name] {
				is.True(seen[k]) // every kind of op comes up
			}
			is.Equal(len(seen), len(kinds[fam.Name])) // and no other
		})
	}
}
