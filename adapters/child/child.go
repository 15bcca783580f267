// Package session is the workspace child: one process per running
// workspace, started by the local backend (adapters/local) as
// `wharf session` and reached only by the Hub, over a Unix socket.
//
// The protocol between the Hub and the child (its command line, readiness
// line, internal endpoints, feeds, error answers and stop) is written once,
// in adapters/internal/childproto, whose package comment is its
// specification; this package is the child's side of it. Beside it, the
// child serves the workspace API under /s/{ID}/, which the Hub forwards
// verbatim: GET /s/{ID}/api/session (Info) and the workspace chat API
// under /s/{ID}/api/chat/ (chatapi.go), whose conversations run on the
// conversation core (hub/chat) over the ACP agents (adapters/acp), and
// the workspace's terminals under /s/{ID}/api/shells (shellsapi.go, over
// package shells). The
// conversation inventory is kept in the data directory the Hub passes
// (--data-dir), so it survives a restart of the child and of the Hub.
package child

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/child/docfeed"
	"github.com/wharfhub/wharf/adapters/child/shells"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// agents is the runtime opts make, or one that knows no agent; the
// terminals its agents open are shown through terminals.
func agents(opts Options, commands map[string][]string, terminals chat.TerminalWatcher, log *slog.Logger) chat.AgentRuntime {
	if opts.Agents == nil {
		return noAgents{}
	}
	return opts.Agents(os.Environ(), commands, terminals, log.With("component", "agents"))
}

// noAgents is the runtime of a child given none.
type noAgents struct{}

func (noAgents) Agents() []chat.AgentDescriptor { return nil }

func (noAgents) Start(context.Context, string, string, chat.AgentSink) (chat.AgentConnection, error) {
	return nil, hub.Errorf(hub.NotFound, "unknown agent")
}

// ErrUsage marks an error in Main's arguments; the command exits 2 for it.
var ErrUsage = childproto.ErrUsage

// shutdownGrace bounds the graceful shutdown of the server; the Hub's own
// stop grace (3 s by default) is longer, so a polite stop normally wins.
const shutdownGrace = 2 * time.Second

// Main runs the child with the arguments that follow `session` on the
// command line, until ctx ends (SIGTERM), stdin reaches EOF or serving
// fails. It writes the readiness line to stdout and logs to stderr. A nil
// error means a clean stop. Main returns without waiting for its read of
// stdin to end: a process exits anyway, and an in-process caller closes
// the reader. It knows no coding agents (Options{}); a program serving
// real workspaces runs daemon.RunChild.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return Run(ctx, args, stdin, stdout, stderr, Options{})
}

// Options wire the child's own adapters; the command that runs the child
// (cmd/wharf) picks them, since adapters do not import each other.
type Options struct {
	// Agents makes the runtime of the workspace's coding agents from the
	// child's environment (already sanitized by the Hub) and the agent
	// commands the Hub passed; the runtime shows the terminals its agents
	// open through terminals (as read-only shells). nil: no agent is
	// known.
	Agents func(env []string, commands map[string][]string, terminals chat.TerminalWatcher, log *slog.Logger) chat.AgentRuntime
}

// Run is Main with the child's adapters chosen by opts.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts Options) error {
	cfg, err := childproto.ParseArgs(args, stderr)
	if err != nil {
		return err
	}
	// The Hub reads stderr; once it is gone (killed, even), a log line
	// would raise SIGPIPE and kill the child before it cleans up. Ignored,
	// the write just fails.
	signal.Ignore(syscall.SIGPIPE)
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("workspace", cfg.WorkspaceID)
	// docfeed needs an absolute root; the Hub passes one, a person may not.
	if abs, err := filepath.Abs(cfg.Path); err == nil {
		cfg.Path = abs
	}
	if err := enterFolder(cfg.Path); err != nil {
		return err
	}
	ln, err := listen(cfg.Socket)
	if err != nil {
		return err
	}
	defer ln.remove()
	docs := newDocuments(docfeed.New(cfg.Path, docfeed.Options{
		WorkspaceAPIRevision: Revision,
		KeepAlive:            childproto.DefaultKeepAlive,
		Logger:               log.With("feed", "document"),
		Signatures:           sessionSignatures(os.Getenv),
	}), log)
	terminals := shells.New(shells.Options{Dir: cfg.Path, Env: os.Environ(), Logger: log.With("component", "shells")})
	defer terminals.Close() // every shell's process group, within a bound
	conversations, err := chat.New(chat.Config{
		Runtime: agents(opts, cfg.Agents, terminals, log),
		Store:   &fileStore{dir: cfg.DataDir, log: log.With("component", "conversations")},
		Dir:     cfg.Path,
		Logger:  log.With("component", "chat"),
	})
	if err != nil {
		ln.remove()
		return err
	}
	// Every request's context derives from streams: ending it ends the
	// feeds, which never go idle for Shutdown to close them.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	held := newPresence(stdin, cfg.DetachGrace)
	srv := &http.Server{
		Handler: NewHandler(cfg.WorkspaceID, HandlerOptions{Documents: docs, Chat: conversations, Shells: terminals,
			Hold: http.HandlerFunc(held.serveHold), Logger: log}),
		BaseContext:       func(net.Listener) context.Context { return streams },
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := childproto.WriteReady(stdout); err != nil {
		srv.Close()
		return fmt.Errorf("announce readiness: %w", err)
	}
	log.Debug("session ready", "path", cfg.Path)

	var failed error
	select {
	case <-ctx.Done():
		log.Info("stopping: asked to terminate")
	case <-held.stopAsked:
		log.Info("stopping: the Hub asked")
	case <-held.gone:
		log.Info(held.why())
	case err := <-served:
		failed = fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Feeds end first, in order (the Hub reads the end of each stream),
	// then the document feed stops with everything it started.
	endStreams()
	conversations.Close() // every agent, with its process group
	terminals.Close()     // every shell, with its process group
	docs.stop(sctx)
	if failed != nil {
		return failed
	}
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running after the grace are cut off; the exit
		// stays clean because nothing is left to lose.
		log.Warn("graceful shutdown cut short", "err", err)
		srv.Close()
	}
	return nil
}

// enterFolder makes the workspace folder the working directory, so every
// relative path the session (and what it starts) uses means the workspace.
func enterFolder(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("workspace folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace folder %s is not a directory", path)
	}
	return os.Chdir(path)
}

// socketListener is the child's listener. Closing it leaves the socket
// file; remove deletes the file only while it is still this listener's, so
// a child outliving its Hub cannot delete the socket of the next Hub's
// child for the same workspace.
type socketListener struct {
	*net.UnixListener
	path string
	self os.FileInfo
}

func (l *socketListener) remove() {
	if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.self) {
		os.Remove(l.path)
	}
}

// listen binds the Unix socket at path, replacing a stale socket left by
// an earlier child but nothing else.
func listen(path string) (*socketListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("refusing to replace %s: not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ul.SetUnlinkOnClose(false)
	ln := &socketListener{UnixListener: ul, path: path}
	// The runtime directory is already private (0700); the mode is a
	// second fence, set before the Hub learns the socket is ready.
	if err := os.Chmod(path, 0o600); err != nil {
		ul.Close()
		ln.remove()
		return nil, fmt.Errorf("socket mode: %w", err)
	}
	if ln.self, err = os.Lstat(path); err != nil {
		ul.Close()
		return nil, fmt.Errorf("socket: %w", err)
	}
	return ln, nil
}
