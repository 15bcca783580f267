package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// buildTimeout bounds the one `go build` of the workspace child.
const buildTimeout = 5 * time.Minute

// buildChild builds cmd/wharf into dir once, so workspace sessions run the
// real `wharf session` (the benchmark's own binary cannot be one). It must
// run from the module root, as `go run ./bench/load` does.
func buildChild(ctx context.Context, dir string) (string, error) {
	if _, err := os.Stat(filepath.Join("cmd", "wharf")); err != nil {
		return "", errors.New("build the workspace child: run the benchmark from the module root (cmd/wharf not found)")
	}
	bin := filepath.Join(dir, "wharf")
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/wharf")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/wharf: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return bin, nil
}

// postJSON sends one bearer-authenticated POST with a JSON body (nil for
// none) and decodes a 200 answer into out (when not nil). Any other status
// is an error carrying the answer's text.
func postJSON(ctx context.Context, client *http.Client, url, sessionID string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, rd)
	if err != nil {
		return err
	}
	req.Header = bearer(sessionID)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, strings.TrimSpace(string(raw)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// action is the answer of the lifecycle operations (WorkspaceActionResult).
type action struct {
	ID         string `json:"id"`
	Running    bool   `json:"running"`
	WasRunning *bool  `json:"wasRunning"`
}

// fleet is the workspace Wharf's registry: n real folders, each an empty
// Git repository, registered through the API.
type fleet struct {
	parent string   // temp dir holding the folders; removed by remove
	ids    []string // in registration order
	paths  []string // the folders, in the same order
}

// registerFleet creates n folders under a fresh temp dir and registers
// them with w.
func registerFleet(ctx context.Context, w *wharf, sessionID string, n int) (*fleet, error) {
	parent, err := os.MkdirTemp("", "wharf-bench-ws-")
	if err != nil {
		return nil, err
	}
	f := &fleet{parent: parent}
	for i := range n {
		dir := filepath.Join(parent, fmt.Sprintf("ws-%02d", i+1))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return f, err
		}
		f.paths = append(f.paths, dir)
	}
	f.ids, err = registerPaths(ctx, w, sessionID, f.paths)
	return f, err
}

// registerPaths registers each folder with POST /api/hub/workspaces
// (init: true, so the Hub's own git runner makes it a repository when it is
// not one yet; start: false) and returns the ids, in the same order.
func registerPaths(ctx context.Context, w *wharf, sessionID string, paths []string) ([]string, error) {
	client := newClient()
	defer client.CloseIdleConnections()
	var ids []string
	for _, dir := range paths {
		var act action
		req := map[string]any{"path": dir, "init": true, "start": false}
		if err := postJSON(ctx, client, w.base+"/api/hub/workspaces", sessionID, req, &act); err != nil {
			return ids, fmt.Errorf("register %s: %w", dir, err)
		}
		if act.ID == "" || act.Running {
			return ids, fmt.Errorf("register %s: unexpected answer %+v", dir, act)
		}
		ids = append(ids, act.ID)
	}
	return ids, nil
}

// remove deletes the workspace folders.
func (f *fleet) remove() {
	if f != nil {
		os.RemoveAll(f.parent)
	}
}

// lifecycleURL is the start or stop operation of workspace id.
func (w *wharf) lifecycleURL(id, op string) string {
	return w.base + "/api/hub/sessions/" + id + "/" + op
}

// startWorkspace starts workspace id over HTTP and checks the answer.
func (w *wharf) startWorkspace(ctx context.Context, client *http.Client, sessionID, id string) error {
	var act action
	if err := postJSON(ctx, client, w.lifecycleURL(id, "start"), sessionID, nil, &act); err != nil {
		return err
	}
	if act.ID != id || !act.Running {
		return fmt.Errorf("start %s: unexpected answer %+v", id, act)
	}
	return nil
}

// stopWorkspace stops workspace id over HTTP and checks that it was running.
func (w *wharf) stopWorkspace(ctx context.Context, client *http.Client, sessionID, id string) error {
	var act action
	if err := postJSON(ctx, client, w.lifecycleURL(id, "stop"), sessionID, nil, &act); err != nil {
		return err
	}
	if act.ID != id || act.Running || act.WasRunning == nil || !*act.WasRunning {
		return fmt.Errorf("stop %s: unexpected answer %+v", id, act)
	}
	return nil
}
