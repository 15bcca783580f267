// Command embed shows the Wharf Hub embedded in another Go program.
//
// The program builds a hub.Hub from the real adapters (a SQLite store in a
// directory of its choosing, the host file system, the system clock, git,
// and workspace sessions run as children of the program itself), adds
// a user, and mounts the Hub API (httpapi.NewHandler) in its own
// http.ServeMux beside a route of its own, GET /hello. The API owns its
// absolute paths (/login, /logout, /api/..., /s/...), so it is mounted at
// "/"; the more specific patterns of the host program still win. It then
// serves on 127.0.0.1 at a free port, logs in as a client with net/http,
// reads /api/hub/state, prints what it got and shuts down.
//
//	go run ./examples/embed [-dir DIR]
//
// Without -dir the state lives in a temporary directory removed on exit.
// The wharf daemon (cmd/wharf) adds the rest a real deployment needs: the
// state directory's permission check and lock, TLS, the first user and
// logging.
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
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/adapters/session"
	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

func main() {
	// The local backend runs each workspace session as a child of this
	// very program (os.Executable() session ...), so a program that embeds
	// the Hub also serves as its workspace child.
	if len(os.Args) > 1 && os.Args[1] == "session" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := session.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
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

	// The Hub over the real adapters. The Hub does not own its ports: close
	// the Hub first, then the store (defers run in reverse).
	store, err := sqlite.Open(filepath.Join(dir, "wharf.db"))
	if err != nil {
		return err
	}
	defer store.Close()
	// Workspace sessions run as children of this very program (see main).
	backend, err := local.New(local.Options{RuntimeDir: filepath.Join(dir, "sessions")})
	if err != nil {
		return err
	}
	h, err := hub.New(hub.Config{}, hub.Ports{Store: store, Clock: hub.SystemClock{}, FS: osfs.FS{},
		Git: gitexec.New(gitexec.Options{}), Backend: backend})
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.AddUser(ctx, userName, password); err != nil && hub.KindOf(err) != hub.Conflict {
		return err // Conflict: the user exists from an earlier run on -dir
	}

	// The host program's own mux: one route of its own, the Hub API for
	// everything else.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from the host program")
	})
	mux.Handle("/", httpapi.NewHandler(h, httpapi.Options{}))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	fmt.Fprintln(stdout, "serving on", base)

	clientErr := client(ctx, base, stdout)

	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return err
	}
	if err := <-served; err != http.ErrServerClosed {
		return err
	}
	return clientErr
}

// client talks to the server as any HTTP client would.
func client(ctx context.Context, base string, stdout io.Writer) error {
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
