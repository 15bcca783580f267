package main

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// TestRenameCrash kills a real daemon with SIGKILL in the middle of the
// rename of a folder that holds a registered workspace, once just before
// the folder moves on disk and once just after (before the registry
// follows), and then starts a normal daemon on the same state directory:
// its recovery must leave the registry and the disk in agreement, with no
// journal left to fence further changes.
func TestRenameCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mode    string
		renamed bool // whether the folder moved before the crash
	}{
		{"before", crashBeforeRename, false},
		{"after", crashAfterRename, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := testContext(t)
			home, dir := t.TempDir(), stateDir(t)
			parent := canonical(t, t.TempDir())
			oldDir, newDir := filepath.Join(parent, "old"), filepath.Join(parent, "new")
			oldRepo, newRepo := filepath.Join(oldDir, "project"), filepath.Join(newDir, "project")
			is.NoErr(os.MkdirAll(oldRepo, 0o755)) // a folder holding the workspace folder
			c := newClient(t, nil)

			h := startHub(ctx, t, dir, home, crashEnv+"="+tc.mode)
			_, token := loginFirstUser(ctx, t, c, h)
			var reg struct {
				ID string `json:"id"`
			}
			status, body := postJSON(ctx, t, c, h.url+"api/hub/workspaces", token,
				map[string]any{"path": oldRepo, "init": true, "start": false}, &reg)
			is.Equal(status, http.StatusOK)                // registered, after the Hub's own git init
			is.True(isDir(filepath.Join(oldRepo, ".git"))) // which made it a repository
			id := reg.ID
			t.Logf("registered: %s", body)

			_, err := tryPost(ctx, newClient(t, nil), h.url+"api/hub/folders/rename", token,
				map[string]any{"path": oldDir, "name": "new"})
			is.True(err != nil) // the connection drops: the Hub died answering
			var ee *exec.ExitError
			is.True(errors.As(h.wait(ctx), &ee))                              // the Hub is dead
			is.Equal(ee.Sys().(syscall.WaitStatus).Signal(), syscall.SIGKILL) // of the crash hook's SIGKILL
			is.Equal(isDir(newDir), tc.renamed)                               // the disk moved or not, as the hook chose
			is.Equal(isDir(oldDir), !tc.renamed)                              // and only one of the two exists

			h2 := startHub(ctx, t, dir, home)
			logs, err := h2.stderr.waitFor(ctx, func(s string) bool { return strings.Contains(s, "msg=serving") })
			is.NoErr(err)                                                                   // the new Hub logs that it serves
			is.True(strings.Contains(logs, `msg="recovered an interrupted folder rename"`)) // after recovering the journal
			is.True(strings.Contains(logs, "renamed="+strconv.FormatBool(tc.renamed)))      // by the disk's verdict
			is.True(!strings.Contains(logs, "journals pending"))                            // leaving none pending

			want, gone := oldRepo, newRepo
			if tc.renamed {
				want, gone = newRepo, oldRepo
			}
			st := hubState(ctx, t, c, h2.url, token)
			is.Equal(len(st.Workspaces), 1)             // the workspace is still registered
			is.Equal(st.Workspaces[0].ID, id)           // under its id
			is.Equal(st.Workspaces[0].Path, want)       // at the folder that exists
			is.Equal(st.Workspaces[0].Availability, "") // which the Hub finds
			is.True(isDir(want))                        // on disk
			is.True(!isDir(gone))                       // and not at the other one

			var res struct {
				Path         string   `json:"path"`
				WorkspaceIDs []string `json:"workspaceIds"`
			}
			status, body = postJSON(ctx, t, c, h2.url+"api/hub/folders/rename", token,
				map[string]any{"path": filepath.Dir(want), "name": "third"}, &res)
			is.Equal(status, http.StatusOK) // a further rename is not fenced by a journal
			third := filepath.Join(parent, "third", "project")
			is.Equal(res.Path, filepath.Join(parent, "third"))                     // it names the new folder
			is.Equal(res.WorkspaceIDs, []string{id})                               // and the workspace that followed
			is.Equal(hubState(ctx, t, c, h2.url, token).Workspaces[0].Path, third) // the registry follows
			is.True(isDir(third))                                                  // as the disk did
			t.Logf("renamed: %s", body)

			var started struct {
				Running bool `json:"running"`
			}
			status, _ = postJSON(ctx, t, c, h2.url+"api/hub/sessions/"+id+"/start", token, nil, &started)
			is.Equal(status, http.StatusOK)                  // the workspace starts at its recovered path
			is.True(started.Running)                         // and runs
			is.NoErr(h2.cmd.Process.Signal(syscall.SIGTERM)) // stop the Hub
			is.NoErr(h2.wait(ctx))                           // it exits 0
		})
	}
}
