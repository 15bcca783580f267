package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// TestACloneJobClonesRegistersAndLeavesNothingBehind runs clone jobs
// through the real `wharf serve`: a local repository cloned, registered
// and started, its events read as a browser reads them; then a clone of a
// source that never answers, an answer typed into its terminal (which
// must not come back in its output) and a cancel that ends git's whole
// process group and leaves no clone folder in the state directory.
func TestACloneJobClonesRegistersAndLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "wclone") // short: sockets live below the state directory
	is.NoErr(err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	src := filepath.Join(tmp, "origin")
	is.NoErr(os.MkdirAll(src, 0o755))
	git(t, nil, src, "init", "-q", "-b", "main")
	git(t, nil, src, "-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "first")
	dest := filepath.Join(tmp, "src")
	is.NoErr(os.MkdirAll(dest, 0o755))
	state := filepath.Join(tmp, "state")
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: state})
	is.NoErr(err)
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	pw, err := d.FirstUserPassword()
	is.NoErr(err)
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)

	job := func(body map[string]any) string {
		t.Helper()
		var out struct{ JobID string }
		status, raw, err := c.Do(ctx, "POST", "api/hub/clone-jobs", body, nil)
		if err != nil || status != http.StatusAccepted || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("create: %d %s %v", status, raw, err)
		}
		return out.JobID
	}
	events := func(id string) *daemontest.SSEReader {
		t.Helper()
		resp, err := c.Request(ctx, "GET", "api/hub/clone-jobs/"+id+"/events", nil)
		is.NoErr(err)
		t.Cleanup(func() { resp.Body.Close() })
		is.Equal(resp.StatusCode, http.StatusOK) // the stream opens
		return daemontest.ReadSSE(resp.Body)
	}

	id := job(map[string]any{"url": src, "dest": dest, "displayName": "Origin copy", "start": true})
	res, err := events(id).Until(ctx, func(e daemontest.Event) bool { return e.Name == "result" })
	is.NoErr(err) // a result
	var result struct {
		Status, Target, WorkspaceID string
		Running                     bool
	}
	is.NoErr(json.Unmarshal([]byte(res.Data), &result))
	is.Equal(result.Status, "succeeded")                                                 // cloned
	is.Equal(result.Target, filepath.Join(dest, "origin"))                               // into the folder named after the source
	is.True(result.Running)                                                              // and started
	is.True(strings.Contains(git(t, nil, result.Target, "log", "--format=%s"), "first")) // with the source's history
	st, err := c.State(ctx)
	is.NoErr(err)
	registered := false
	for _, w := range st.Workspaces {
		registered = registered || w.ID == result.WorkspaceID && w.DisplayName == "Origin copy" && w.Running
	}
	is.True(registered) // registered under its display name, running

	// A source that never answers: the answer typed meanwhile never comes
	// back, and a cancel ends it all.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(stall.Close)
	id = job(map[string]any{"url": stall.URL + "/slow.git", "dest": dest})
	stream := events(id)
	_, err = stream.Until(ctx, func(e daemontest.Event) bool { return e.Name == "phase" })
	is.NoErr(err) // cloning
	status, _, err := c.Do(ctx, "POST", "api/hub/clone-jobs/"+id+"/input", map[string]string{"input": "typed-secret-answer"}, nil)
	is.NoErr(err)
	is.Equal(status, http.StatusOK) // typed into git's terminal
	var answer struct{ Status string }
	status, _, err = c.Do(ctx, "POST", "api/hub/clone-jobs/"+id+"/cancel", nil, &answer)
	is.NoErr(err)
	is.Equal(status, http.StatusOK)
	is.Equal(answer.Status, "cancelled") // this call stopped it
	var output strings.Builder
	res, err = stream.Until(ctx, func(e daemontest.Event) bool {
		output.WriteString(e.Data)
		return e.Name == "result"
	})
	is.NoErr(err)
	is.True(strings.Contains(res.Data, `"status":"cancelled"`))        // cancelled
	is.True(!strings.Contains(output.String(), "typed-secret-answer")) // the answer never came back
	entries, err := os.ReadDir(filepath.Join(state, "clones"))
	is.NoErr(err)
	is.Equal(len(entries), 0) // no clone's credential folder is left
}
