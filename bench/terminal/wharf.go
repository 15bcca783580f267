package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/bench/internal/proc"
)

// The Wharf side: a real `wharf serve`, its first user's device session,
// one workspace and one shell attached through the Hub.

type wharf struct {
	d    *daemontest.Daemon
	api  *daemontest.Client
	home string // the daemon's $HOME: the workspace goes under it
}

// startWharf builds wharf into dir and runs `wharf serve` over a state
// directory in dir, its shells /bin/sh, and logs in.
func startWharf(ctx context.Context, dir string) (*wharf, error) {
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	bin, err := daemontest.BuildBinary(bctx, dir)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cannot build the wharf binary (run from the module root): %w", err)
	}
	home := filepath.Join(dir, "home")
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: bin, StateDir: filepath.Join(dir, "state"), Home: home,
		Env: []string{"SHELL=/bin/sh"}})
	if err != nil {
		return nil, err
	}
	w := &wharf{d: d, home: home}
	pw, err := d.FirstUserPassword()
	if err == nil {
		w.api, _, err = daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	}
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// stop ends the daemon and makes sure none of its children is left.
func (w *wharf) stop() {
	left := proc.Descendants(w.d.Pid())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := w.d.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "terminal: stopping the daemon:", err)
	}
	proc.KillLeft(left, 5*time.Second, func(pid int) {
		fmt.Fprintf(os.Stderr, "terminal: process %d outlived the daemon: killed\n", pid)
	})
}

// do is api.Do wanting status want.
func (w *wharf) do(ctx context.Context, method, path string, in, out any, want int) error {
	status, body, err := w.api.Do(ctx, method, path, in, out)
	if err == nil && status != want {
		err = fmt.Errorf("%s /%s: %d %s", method, path, status, strings.TrimSpace(string(body)))
	}
	return err
}

// workspace makes a folder under the daemon's home, registers it (git
// init by the Hub) and starts its session; it returns its id and folder.
func (w *wharf) workspace(ctx context.Context, name string) (id, folder string, err error) {
	folder = filepath.Join(w.home, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", "", err
	}
	var res struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	err = w.do(ctx, "POST", "api/hub/workspaces", map[string]any{"path": folder, "init": true, "start": true}, &res, http.StatusOK)
	if err == nil && !res.Running {
		err = fmt.Errorf("workspace %s registered but not running", name)
	}
	return res.ID, folder, err
}

// attachShell opens a shell in workspace ws and attaches to it through
// the Hub, with the device session's bearer.
func (w *wharf) attachShell(ctx context.Context, ws string) (*hubTerminal, error) {
	var sh struct {
		ID string `json:"id"`
	}
	if err := w.do(ctx, "POST", "s/"+ws+"/api/shells", map[string]any{"cols": 200, "rows": 50}, &sh, http.StatusCreated); err != nil {
		return nil, err
	}
	url := "ws" + strings.TrimPrefix(w.api.Base, "http") + "s/" + ws + "/api/shells/" + sh.ID + "/attach"
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + w.api.Token}},
	})
	if err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	return newHubTerminal(conn), nil
}
