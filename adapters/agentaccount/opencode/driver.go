package opencode

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub"
)

// Options configure the driver.
type Options struct {
	// Command is the program and its leading arguments; default
	// ["opencode"]. The driver adds `serve --hostname 127.0.0.1 --port 0`.
	Command []string
	// Env is the runtime's whole environment (HOME, PATH, XDG_*, …): the
	// logins land in the store it locates.
	Env []string
	// Logger gets diagnostics; never a key, code, address, token or the
	// server's output.
	Logger *slog.Logger
}

// New returns the OpenCode driver.
func New(opts Options) hub.AgentLoginDriver {
	if len(opts.Command) == 0 {
		opts.Command = []string{"opencode"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &drv{opts: opts, log: opts.Logger.With("agent", "opencode")}
}

// drv is the driver.
type drv struct {
	opts Options
	log  *slog.Logger
}

// Agent names OpenCode.
func (d *drv) Agent() hub.AgentLoginAgent {
	return hub.AgentLoginAgent{ID: "opencode", Name: "OpenCode", Command: d.opts.Command[0], LoginCommand: "opencode auth login"}
}

// Bounds of a start.
const (
	// maxStartOutput bounds what the server may print before it says
	// where it listens.
	maxStartOutput = 64 << 10
	// listenPrefix starts the line `opencode serve` prints once it
	// listens ("opencode server listening on http://127.0.0.1:4096").
	listenPrefix = "opencode server listening on "
	// serverUser is the user name of the server's basic authentication
	// (OpenCode's default, set explicitly).
	serverUser = "opencode"
)

// Start runs `opencode serve` on loopback, with a random password of its
// own (OPENCODE_SERVER_PASSWORD: the server then refuses any request
// without it, so other local users cannot drive it), in "/" with project
// configuration off (OPENCODE_DISABLE_PROJECT_CONFIG): no repository's
// opencode.json or plugin is loaded, only the user's own. It returns once
// the server printed where it listens and answered its health check.
func (d *drv) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	path, err := driver.LookPath("OpenCode", d.opts.Command[0], d.opts.Env)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, hub.Wrap(hub.Internal, err, "The Hub could not make a password for OpenCode's login server.")
	}
	pass := hex.EncodeToString(secret)
	args := append(slices.Clone(d.opts.Command[1:]), "serve", "--hostname", "127.0.0.1", "--port", "0")
	cmd := exec.Command(path, args...)
	cmd.Dir = "/"
	cmd.Env = append(slices.Clone(d.opts.Env),
		"OPENCODE_SERVER_USERNAME="+serverUser, "OPENCODE_SERVER_PASSWORD="+pass,
		"OPENCODE_DISABLE_PROJECT_CONFIG=1", "OPENCODE_DISABLE_AUTOUPDATE=1")
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "OpenCode's login server could not be started.")
	}
	cmd.Stdout = stdoutW // stderr: /dev/null; nothing of it is shown
	err = procgroup.Start(cmd)
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		return nil, hub.Wrap(hub.Unavailable, err, "OpenCode's login server could not be started.")
	}
	r := newRuntime(d, cmd)
	addr := make(chan string, 1)
	go func() {
		defer stdout.Close()
		addr <- listenAddress(stdout)
		_, _ = io.Copy(io.Discard, stdout) // keep the pipe drained for its life
	}()
	fail := func(cause error, msg string) (hub.AgentLoginRuntime, error) {
		r.Close()
		return nil, hub.Wrap(hub.Unavailable, cause, msg)
	}
	var base string
	select {
	case base = <-addr:
	case <-ctx.Done():
		return fail(ctx.Err(), "OpenCode's login server did not start in time.")
	}
	if base == "" {
		select {
		case <-r.done:
			return fail(errors.New("exited before listening"), "OpenCode's login server exited while starting.")
		default:
			return fail(errors.New("no loopback listening line"), "OpenCode's login server did not say where it listens.")
		}
	}
	r.client = newClient(base, serverUser, pass)
	if err := r.health(ctx); err != nil {
		return fail(err, "OpenCode's login server did not answer.")
	}
	d.log.Info("login runtime started", "version", r.version)
	return r, nil
}

// listenAddress reads the server's output until the line saying where it
// listens (at most maxStartOutput bytes) and returns the server's base
// URL, "" when the output ends or overflows first or the address is not
// an http: one on 127.0.0.1 (where it was told to listen).
func listenAddress(out io.Reader) string {
	sc := bufio.NewScanner(io.LimitReader(out, maxStartOutput))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), listenPrefix)
		if !ok {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(rest))
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.User != nil ||
			strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return ""
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil || port <= 0 || port > 65535 {
			return ""
		}
		return "http://127.0.0.1:" + strconv.Itoa(port)
	}
	return ""
}

// health checks the server answers, with the runtime's password, and
// learns its version.
func (r *runtime) health(ctx context.Context) error {
	a, err := r.client.call(ctx, "GET", "/global/health", nil, callTimeout)
	if err != nil {
		return err
	}
	if !a.ok() {
		return statusError("/global/health", a)
	}
	var h struct {
		Healthy bool   `json:"healthy"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(a.body, &h); err != nil || !h.Healthy {
		return errors.New("/global/health: not healthy")
	}
	r.version = clean(h.Version, 64, false)
	return nil
}

// killGrace is how long a closing server may take to exit after SIGTERM
// before its group is killed: OpenCode 1.18.33 sometimes ignores the
// SIGTERM for many seconds.
const killGrace = 2 * time.Second
