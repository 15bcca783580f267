// Command embed shows the Wharf Hub embedded in another Go program.
//
// The program builds a running Hub with adapters/daemon, the same assembly
// the wharf command uses (a SQLite store in a state directory of its
// choosing, the host file system, the system clock, git, and workspace
// sessions run as children of the program itself), and swaps one adapter
// in one line: git runs through a wrapper that counts its calls. It adds a
// user and mounts the Hub API (daemon.Handler) in its own http.ServeMux
// beside a route of its own, GET /hello. The API owns its absolute paths
// (/login, /logout, /api/..., /s/...), so it is mounted at "/"; the more
// specific patterns of the host program still win. It then serves on
// 127.0.0.1 at a free port, logs in as a client with net/http, registers a
// folder as a workspace, reads /api/hub/state, prints what it got and
// shuts down.
//
//	go run ./examples/embed [-dir DIR]
//
// Without -dir the state lives in a temporary directory removed on exit; a
// directory given must be private to its user (mode 0700). The wharf
// command adds what a deployment needs beyond the daemon: flags, the first
// user and its password, and the log format.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func main() {
	// The local backend runs each workspace session as a child of this
	// very program (os.Executable() session ...), so a program that embeds
	// the Hub also serves as its workspace child.
	if len(os.Args) > 1 && os.Args[1] == "session" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := daemon.RunChild(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	dir := flag.String("dir", "", "state `directory` (default: a temporary one)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err := run(ctx, *dir, os.Stdout)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
}

// The demo user. A real program would take the password from its operator.
const (
	userName = "demo"
	password = "correct horse battery staple"
)

func run(ctx context.Context, dir string, stdout io.Writer) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wharf-embed-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}

	// The Hub over the real adapters, with its state in dir. Swapping an
	// adapter is one line: Adapt receives the real ports before the Hub is
	// built. Here git runs through a wrapper that counts its calls.
	var git countingGit
	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir, Adapt: func(p *service.Ports) { git.GitRunner, p.Git = p.Git, &git }})
	if err != nil {
		return err
	}
	defer d.Close()
	h := d.Hub()
	if err := h.AddUser(ctx, userName, password); err != nil && hub.KindOf(err) != hub.Conflict {
		return err // Conflict: the user exists from an earlier run on -dir
	}

	// The host program's own mux: one route of its own, the Hub API for
	// everything else.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from the host program")
	})
	mux.Handle("/", d.Handler())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	folder := filepath.Join(dir, "hello")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- d.Serve(serveCtx, ln, mux) }()
	base := "http://" + ln.Addr().String()
	fmt.Fprintln(stdout, "serving on", base)

	clientErr := client(ctx, base, folder, stdout)
	fmt.Fprintf(stdout, "git ran %d times\n", git.calls.Load())

	stop()
	if err := <-served; err != nil {
		return err
	}
	return clientErr
}

// client talks to the server as any HTTP client would.
// It logs in, registers folder as a workspace (asking the Hub to run git
// init there) and reads the Hub state.
func client(ctx context.Context, base, folder string, stdout io.Writer) error {
	c := &http.Client{Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()

	hello, err := do(ctx, c, "GET", base+"/hello", "", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "GET /hello: %s", hello)

	body, err := do(ctx, c, "POST", base+"/login", "",
		map[string]string{"name": userName, "password": password, "deviceLabel": "embed example"})
	if err != nil {
		return err
	}
	var session struct {
		SessionID string `json:"sessionId"`
		User      string `json:"user"`
	}
	if err := json.Unmarshal(body, &session); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "logged in as", session.User)

	body, err = do(ctx, c, "POST", base+"/api/hub/workspaces", session.SessionID,
		map[string]any{"path": folder, "init": true, "start": false})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "registered %s: %s", filepath.Base(folder), body)

	body, err = do(ctx, c, "GET", base+"/api/hub/state", session.SessionID, nil)
	if err != nil {
		return err
	}
	var state struct {
		Version              string            `json:"version"`
		HubAPIRevision       int               `json:"hubApiRevision"`
		WorkspaceAPIRevision int               `json:"workspaceApiRevision"`
		Workspaces           []json.RawMessage `json:"workspaces"`
	}
	if err := json.Unmarshal(body, &state); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hub state: version %s, Hub API %d, workspace API %d, %d workspaces\n",
		state.Version, state.HubAPIRevision, state.WorkspaceAPIRevision, len(state.Workspaces))
	return nil
}

// do sends a request, with body as JSON and a bearer session when given,
// and returns the body of a 200 answer.
func do(ctx context.Context, c *http.Client, method, url, bearer string, body any) ([]byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// countingGit is a GitRunner that counts the calls it passes on: the kind
// of wrapper (logging, metrics, a sandbox) an embedder swaps in.
type countingGit struct {
	hub.GitRunner
	calls atomic.Int64
}

func (g *countingGit) Inspect(ctx context.Context, dir string) (hub.Repository, error) {
	g.calls.Add(1)
	return g.GitRunner.Inspect(ctx, dir)
}

func (g *countingGit) Init(ctx context.Context, dir string) error {
	g.calls.Add(1)
	return g.GitRunner.Init(ctx, dir)
}
