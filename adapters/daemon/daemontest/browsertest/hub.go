// Package browsertest runs the dashboard for real: a `wharf serve` process
// built from this checkout, with real git, and a headless Chromium driven
// over the DevTools protocol (github.com/chromedp/chromedp). The browser
// tests of adapters/web, the screenshot program and the performance
// program share it. Nothing here is a test itself.
package browsertest

import (
	"bufio"
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
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// Build compiles ./cmd/wharf of the module this package belongs to into
// dir and returns the binary's path. Go's build cache makes it quick after
// the first time.
func Build(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "wharf", "./cmd/wharf")
}

// BuildAgent compiles the scripted ACP agent (fakes/acpagent) into dir
// and returns the binary's path: `wharf serve --agent` runs it as a
// coding agent whose turns play the scripts of fakes/agentscript.
func BuildAgent(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "acpagent", "./fakes/acpagent")
}

func build(ctx context.Context, dir, name, pkg string) (string, error) {
	return daemontest.BuildPackage(ctx, dir, "github.com/wharfhub/wharf/"+strings.TrimPrefix(pkg, "./"))
}

// AgentFlag is the value of `wharf serve --agent` that names the
// scripted agent at bin as agent id, keeping its sessions in state (so
// that session/load replays them) and passing it extra flags.
func AgentFlag(id, bin, state string, extra ...string) string {
	argv, _ := json.Marshal(append([]string{bin, "--state", state}, extra...))
	return id + "=" + string(argv)
}

// Hub is a running `wharf serve` with a private state directory.
type Hub struct {
	URL      string // "http://127.0.0.1:port/"
	User     string
	Password string
	StateDir string
	bin      string
	args     []string
	env      []string
	cmd      *exec.Cmd
	stderr   *lockedBuffer
	done     chan struct{}
}

// StartArgs runs bin as `wharf serve --listen 127.0.0.1:0` with args
// added (--agent, say) and a fresh state directory under dir, waits for it
// to serve and reads the first user's password from the state directory
// (stderr is no terminal here). env adds to the process's environment
// (HOME, say, which the folder browser starts at).
func StartArgs(ctx context.Context, bin, dir string, args []string, env ...string) (*Hub, error) {
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		return nil, err
	}
	h := &Hub{StateDir: state, bin: bin, args: args, env: env}
	if err := h.run(ctx, "127.0.0.1:0"); err != nil {
		return nil, err
	}
	pw, err := os.ReadFile(filepath.Join(state, "first-user-password"))
	if err != nil {
		h.Stop()
		return nil, err
	}
	h.Password = strings.TrimSpace(string(pw))
	h.User = daemontest.FirstUser // $USER, which names the first user
	return h, nil
}

// Restart stops the daemon and starts it again on the same address and
// state directory: clients see their streams end and the Hub come back.
func (h *Hub) Restart(ctx context.Context) error {
	h.Stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/")
	return h.run(ctx, addr)
}

// run starts the process listening on addr and waits for its address.
func (h *Hub) run(ctx context.Context, addr string) error {
	cmd := exec.Command(h.bin, append([]string{"serve", "--listen", addr, "--state-dir", h.StateDir, "--log-level", "warn"}, h.args...)...)
	// The test's environment scrubbed of the user's own (HOME, XDG_*,
	// GIT_*, WHARF_*), the first user named as the browser tests expect,
	// then what the caller adds (HOME, say).
	cmd.Env = append(daemontest.Environ(filepath.Join(filepath.Dir(h.StateDir), "home"), daemontest.FirstUser), h.env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	h.cmd, h.done = cmd, make(chan struct{})
	if h.stderr == nil {
		h.stderr = &lockedBuffer{}
	}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := h.done
	go func() { cmd.Wait(); close(done) }()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "http://") {
				select {
				case urls <- line:
				default:
				}
			}
		}
	}()
	select {
	case h.URL = <-urls:
		return nil
	case <-done:
		return fmt.Errorf("wharf serve exited: %s", h.stderr.String())
	case <-time.After(30 * time.Second):
		h.Stop()
		return fmt.Errorf("wharf serve printed no address in 30 s: %s", h.stderr.String())
	case <-ctx.Done():
		h.Stop()
		return ctx.Err()
	}
}

// Stop ends the daemon with SIGTERM (it stops its workspace sessions) and
// waits for it, killing it after 15 s.
func (h *Hub) Stop() {
	if h.cmd == nil || h.cmd.Process == nil {
		return
	}
	h.cmd.Process.Signal(os.Interrupt)
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
	}
}

// Log returns what the daemon wrote to stderr.
func (h *Hub) Log() string { return h.stderr.String() }

// Client is a bearer client of the Hub's API: "another device", such as
// curl, acting beside the browser.
type Client struct {
	hub   *Hub
	token string
}

// Login logs in over the API as the first user.
func (h *Hub) Login(ctx context.Context, label string) (*Client, error) {
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c := &Client{hub: h}
	if err := c.Do(ctx, "POST", "/login", map[string]string{"name": h.User, "password": h.Password, "deviceLabel": label}, &res); err != nil {
		return nil, err
	}
	c.token = res.SessionID
	return c, nil
}

// StatusError is a refusal of the API.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Body) }

// Do sends one JSON request and decodes the answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.hub.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Register registers path as a workspace (hubConfigureWorkspace) and
// returns its id.
func (c *Client) Register(ctx context.Context, path, displayName string, start bool) (string, error) {
	var res struct {
		Workspace struct {
			ID string `json:"id"`
		} `json:"workspace"`
		StartError *string `json:"startError"`
	}
	err := c.Do(ctx, "POST", "/api/hub/workspaces/configure",
		map[string]any{"path": path, "displayName": displayName, "start": start, "init": true}, &res)
	if err == nil && res.StartError != nil {
		err = errors.New("start failed: " + *res.StartError)
	}
	return res.Workspace.ID, err
}

// GitRepo makes dir a Git repository with one commit of a README.
func GitRepo(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# hello\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "README.md"},
		{"-c", "user.name=Ann", "-c", "user.email=ann@example.com", "commit", "-q", "-m", "Start the project"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, b)
		}
	}
	return nil
}

// lockedBuffer is the daemon's stderr, written by its process and read
// by the tests.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
