package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/bench/internal/proc"
)

// The Wharf side: a real `wharf serve` with the scripted agent, its
// users and device sessions, workspaces and conversations.

// agentID is the scripted agent's id in the daemon's --agent flag.
const agentID = "perf"

// Streams per device session and per user: under the Hub's defaults (8
// and 32).
const (
	streamsPerSession = 6
	streamsPerUser    = 30
)

type wharf struct {
	d      *daemontest.Daemon
	api    *daemontest.Client // the first user's, from 127.0.0.1
	home   string             // the daemon's $HOME: workspaces go under it
	pw     map[string]string  // password by user
	logins map[string][]*daemontest.Client
}

// build builds the wharf command and the scripted agent into dir.
func build(ctx context.Context, dir string) (wharfBin, agentBin string, err error) {
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if wharfBin, err = daemontest.BuildBinary(bctx, dir); err != nil {
		return "", "", fmt.Errorf("cannot build the wharf binary (run from the module root): %w", err)
	}
	if agentBin, err = daemontest.BuildPackage(bctx, dir, "github.com/wharfhub/wharf/fakes/acpagent"); err != nil {
		return "", "", fmt.Errorf("cannot build the scripted agent: %w", err)
	}
	return wharfBin, agentBin, nil
}

// startWharf runs `wharf serve` over a state directory in dir, with the
// scripted agent (its sessions kept in dir too), and logs in.
func startWharf(ctx context.Context, dir, wharfBin, agentBin string) (*wharf, error) {
	agent, _ := json.Marshal([]string{agentBin, "--state", filepath.Join(dir, "agent")})
	home := filepath.Join(dir, "home")
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: wharfBin, StateDir: filepath.Join(dir, "state"), Home: home,
		Args: []string{"--agent", agentID + "=" + string(agent)}})
	if err != nil {
		return nil, err
	}
	w := &wharf{d: d, home: home, pw: map[string]string{}, logins: map[string][]*daemontest.Client{}}
	pw, err := d.FirstUserPassword()
	if err == nil {
		w.pw[daemontest.FirstUser] = pw
		w.api, _, err = daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	}
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// stop ends the daemon (SIGTERM, then SIGKILL after 15 s), then makes
// sure none of its children and agents is left: any still there after 5 s
// is killed by its pid.
func (w *wharf) stop() {
	left := proc.Descendants(w.d.Pid())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := w.d.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chatperf: stopping the daemon:", err)
	}
	proc.KillLeft(left, 5*time.Second, func(pid int) {
		fmt.Fprintf(os.Stderr, "chatperf: process %d outlived the daemon: killed\n", pid)
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
// init by the Hub) and starts its session; it returns its id.
func (w *wharf) workspace(ctx context.Context, name string) (string, error) {
	path := filepath.Join(w.home, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", err
	}
	var res struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	err := w.do(ctx, "POST", "api/hub/workspaces", map[string]any{"path": path, "init": true, "start": true}, &res, http.StatusOK)
	if err == nil && !res.Running {
		err = fmt.Errorf("workspace %s registered but not running", name)
	}
	return res.ID, err
}

// conversation is one conversation: its workspace, id and the cursor of
// the snapshot taken when it was created.
type conversation struct{ ws, id, cursor string }

func (c conversation) path(rest string) string {
	return "s/" + c.ws + "/api/chat/conversations/" + url.PathEscape(c.id) + rest
}

// newConversation creates a conversation with the scripted agent in ws
// and takes its snapshot's cursor.
func (w *wharf) newConversation(ctx context.Context, ws string) (conversation, error) {
	var created struct {
		Conversation struct{ ID string } `json:"conversation"`
	}
	c := conversation{ws: ws}
	err := w.do(ctx, "POST", "s/"+ws+"/api/chat/conversations", map[string]any{"agent": agentID}, &created, http.StatusCreated)
	var snap struct{ Cursor string }
	if c.id = created.Conversation.ID; err == nil {
		err = w.do(ctx, "GET", c.path(""), nil, &snap, http.StatusOK)
	}
	c.cursor = snap.Cursor
	return c, err
}

// send sends a message (a script's prompt) to c.
func (w *wharf) send(ctx context.Context, c conversation, text string) error {
	return w.do(ctx, "POST", c.path("/messages"), map[string]any{"text": text}, nil, http.StatusAccepted)
}

// livePath is the live stream following c from its snapshot's cursor.
func livePath(c conversation) string {
	subs, _ := json.Marshal([]map[string]string{{"topic": "conversation", "key": c.id, "cursor": c.cursor}})
	return "api/hub/live?ws=" + url.QueryEscape(c.ws) + "&subs=" + url.QueryEscape(string(subs))
}

// clientFor is the device session stream i of a set opens with, for the
// set's users in turn (streamsPerUser each), created when missing,
// logging in once per streamsPerSession streams, from ip.
func (w *wharf) clientFor(ctx context.Context, users []string, i int, hc *http.Client) (*daemontest.Client, error) {
	if i/streamsPerUser >= len(users) {
		return nil, errors.New("too many streams for the users given")
	}
	user, k := users[i/streamsPerUser], i%streamsPerUser/streamsPerSession
	if k < len(w.logins[user]) {
		c := *w.logins[user][k]
		c.HTTP = hc
		return &c, nil
	}
	if _, ok := w.pw[user]; !ok {
		pw := "perf-password-" + user
		cmd := w.d.Command(ctx, "user", "add", user, "--password-stdin")
		cmd.Stdin = strings.NewReader(pw + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("wharf user add %s: %v: %s", user, err, out)
		}
		w.pw[user] = pw
	}
	c, _, err := daemontest.Login(ctx, w.api.HTTP, w.d.URL(), user, w.pw[user])
	if err != nil {
		return nil, err
	}
	w.logins[user] = append(w.logins[user], c)
	return w.clientFor(ctx, users, i, hc)
}

// follow opens n streams following c (stream i: conversation of(i)), from
// ip, as users, and waits for every ready.
func (w *wharf) follow(ctx context.Context, n int, of func(i int) conversation, users []string, ip func(i int) string) ([]*stream, error) {
	clients := map[string]*http.Client{}
	ss := make([]*stream, 0, n)
	for i := range n {
		if clients[ip(i)] == nil {
			clients[ip(i)] = sourceClient(ip(i))
		}
		c, err := w.clientFor(ctx, users, i, clients[ip(i)])
		var s *stream
		if err == nil {
			s, err = openStream(ctx, c, livePath(of(i)))
		}
		if err != nil {
			closeAll(ss)
			return nil, fmt.Errorf("stream %d: %w", i, err)
		}
		ss = append(ss, s)
	}
	if err := waitReady(ctx, ss); err != nil {
		closeAll(ss)
		return nil, err
	}
	return ss, nil
}
