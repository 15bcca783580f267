package daemontest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// WorktreeFamily creates linked worktrees of a repository the writer
// makes (new branches from main: `git worktree add`, the checkout, then
// the registration, under a worktree-create journal), opens, forgets and
// registers them again, and deletes them, each delete after its
// preflight (a worktree-delete journal around `git worktree remove`).
// Kills thus fall between git making a tree and the Hub registering it,
// and between the Hub's last check and git removing one. Its facts:
//
//	main                  → "id=<id>"                the repository's workspace
//	tree <folder>         → "branch=<b> ws=<id|-> owner=<o> <availability> files=<ok|unchecked>"
//	                      | "unlisted folder"        a folder git does not list
//	workspace <id>        → "tree=<folder> name=<display name> parent=<id>"
//	branch <b>            → ""                       a branch a create made: never deleted
//	guard <folder>/<file> → ""                       a file a stale delete must keep
//
// so a tree git made and the Hub lost (listed but neither registered nor
// registrable) or lost the ownership of, a folder git does not list, a
// registered workspace whose tree is gone (availability missing) and a
// branch a delete took all show as facts no write explains. A create a
// kill cut may have made nothing or a tree of the Hub's, registered or
// not, with or without its checkout; a delete a kill cut may have
// removed its tree and registration, or nothing: a tree fully gone or
// fully listed. An unlisted folder, a listed tree whose folder is gone
// or a registration left on one is neither. (A git the killed daemon
// started runs on to its end, removing the tree's folder, then its
// administrative folder; one that ends after the restarted daemon's
// recovery looked leaves such a state, which this reports.)
//
// The fingerprint rule: two deletes in five are guarded. The writer
// takes a preflight's fingerprint, then puts an untracked file into the
// tree and deletes with the old fingerprint: the answer must be
// local-data, and the file (a "guard" fact) must outlive every restart,
// since no delete of its tree matched. Such a delete has no Landed: had
// one a kill cut removed the tree, the tree and its guard would be lost.
//
// A tree the model does not know (a create a kill cut), listed and not
// registered after a restart, is registered by Observe, which must
// succeed: the issue's "a registered or retryable tree, never a lost
// one". That also settles its create journal, which the driver's
// journal census would otherwise find outliving the restart.
//
// It notes the trees a restart registered before their checkout ran
// (the kill fell between `git worktree add --no-checkout` and the
// checkout: an empty folder in which git shows every file as a staged
// deletion), which the recovery's contract allows, and the trees
// Observe registered.
func WorktreeFamily() *Family { return WorktreeFamilyOf(0) }

// WorktreeFamilyOf is WorktreeFamily over a repository of files more
// tracked files: thousands make git's checkout and removal last long
// enough for kills to fall inside them, and for a restarted daemon to
// meet a git process the killed one started (CrashConfig.Parse's
// worktree-files). Such a git runs on after the kill, so what it does
// after the restart's recovery looked shows as facts no write explains:
// a registration left on a tree it then removed, a tree half removed, a
// preflight refused for the index.lock of its checkout.
func WorktreeFamilyOf(files int) *Family {
	wf := &worktreeWriters{plans: map[*Writer]*deletePlan{}}
	return &Family{Name: "worktrees", Next: wf.next, Observe: wf.observe,
		Setup: func(ctx context.Context, w *Writer) error { return setupWorktrees(ctx, w, files) }}
}

// maxTrees bounds a writer's trees: above it, it deletes.
const maxTrees = 4

// trackedFile is a file of the repository's commit: a tree whose
// checkout ran has it (files=ok), one registered before its checkout
// ran does not (files=unchecked).
const trackedFile = "README.md"

// worktreeWriters holds each writer's pending delete: the preflight it
// took, for its next op.
type worktreeWriters struct {
	mu    sync.Mutex
	plans map[*Writer]*deletePlan
}

// deletePlan is what a preflight answered about one tree.
type deletePlan struct {
	folder, branch, fingerprint string
}

// mainRepo is the writer's repository; its trees go beside it.
func mainRepo(w *Writer) string { return filepath.Join(w.Root, "repo") }

// treesDir is where the Hub makes the repository's trees.
func treesDir(w *Writer) string { return mainRepo(w) + ".worktrees" }

// setupWorktrees makes the repository (one commit on main of
// trackedFile and files more, a thousand a folder) and registers it as a
// stopped workspace.
func setupWorktrees(ctx context.Context, w *Writer, files int) error {
	repo := mainRepo(w)
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, trackedFile), []byte("the main checkout\n"), 0o644); err != nil {
		return err
	}
	for i := range files {
		dir := filepath.Join(repo, fmt.Sprintf("d%d", i/1000))
		if i%1000 == 0 {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("a tracked file\n"), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"-c", "user.name=Crash", "-c", "user.email=crash@example.com", "commit", "-q", "-m", "the main checkout"},
	} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	var res struct {
		ID string `json:"id"`
	}
	if err := w.Call(ctx, "POST", "api/hub/workspaces", map[string]any{"path": repo, "init": false, "start": false}, &res); err != nil {
		return err
	}
	w.Model["main"] = "id=" + res.ID
	return nil
}

// treeState is a "tree" fact, read back.
type treeState struct {
	branch, ws, owner, availability, files string
}

// String is the fact, as parseTree reads it.
func (t treeState) String() string {
	return fmt.Sprintf("branch=%s ws=%s owner=%s %s files=%s", t.branch, t.ws, t.owner, t.availability, t.files)
}

// parseTree reads a "tree" fact; ok is false for anything but a listed
// tree the Hub made, present: the only trees the writer acts on.
func parseTree(v string) (t treeState, ok bool) {
	f := strings.Fields(v)
	if len(f) != 5 {
		return t, false
	}
	t.branch, _ = strings.CutPrefix(f[0], "branch=")
	t.ws, _ = strings.CutPrefix(f[1], "ws=")
	t.owner, _ = strings.CutPrefix(f[2], "owner=")
	t.availability = f[3]
	t.files, _ = strings.CutPrefix(f[4], "files=")
	return t, t.branch != "" && t.owner == "wharf" && t.availability == "present"
}

// trees returns the writer's trees it may act on, by folder, sorted.
func trees(m Model) (folders []string, state map[string]treeState) {
	state = map[string]treeState{}
	for _, k := range m.Keys("tree ") {
		if t, ok := parseTree(m[k]); ok {
			f := strings.TrimPrefix(k, "tree ")
			folders = append(folders, f)
			state[f] = t
		}
	}
	return folders, state
}

// mainID is the id of the writer's repository workspace.
func mainID(m Model) string { return strings.TrimPrefix(m["main"], "id=") }

func (wf *worktreeWriters) next(w *Writer) (Op, error) {
	wf.mu.Lock()
	plan := wf.plans[w]
	delete(wf.plans, w)
	wf.mu.Unlock()
	folders, state := trees(w.Model)
	if plan != nil && state[plan.folder].branch == plan.branch {
		if w.Rand.IntN(5) < 2 {
			return guardedDeleteOp(w, plan)
		}
		return deleteTreeOp(w, plan), nil
	}
	var registered, unregistered []string
	for _, f := range folders {
		if state[f].ws == "-" {
			unregistered = append(unregistered, f)
		} else {
			registered = append(registered, f)
		}
	}
	pick := func(fs []string) string { return fs[w.Rand.IntN(len(fs))] }
	// Creates and deletes (a preflight, then its delete) are the writes
	// with journals: most of the load.
	choice := w.Rand.IntN(100)
	switch {
	case len(folders) == 0 || len(folders) < maxTrees && choice < 40:
		return createTreeOp(w, w.NewName(branchPrefixes[w.Rand.IntN(len(branchPrefixes))])), nil
	case choice < 40: // no room for another tree
		return wf.preflightOp(w, pick(folders), state)
	case len(registered) > 0 && choice < 48:
		return openTreeOp(w, pick(registered), state), nil
	case len(registered) > 0 && choice < 58:
		return forgetTreeOp(w, pick(registered), state), nil
	case len(unregistered) > 0 && choice < 68:
		return registerTreeOp(w, pick(unregistered), state), nil
	default:
		return wf.preflightOp(w, pick(folders), state)
	}
}

// branchPrefixes vary the new branches: a slash and capitals make the
// folder differ from the branch.
var branchPrefixes = []string{"t", "feature/t", "Fix-"}

// folderOf is the folder the Hub gives a branch of branchPrefixes:
// lower-cased, every character outside [a-z0-9_-] a "-".
func folderOf(branch string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '-'
	}, branch)
}
