// Package session is the workspace child: one process per running
// workspace, started by the local backend (adapters/local) as
// `wharf session` and reached only by the Hub, over a Unix socket.
//
// # Internal protocol, workspace revision 24
//
// The protocol is private to one Wharf build (the Hub always starts its own
// binary) and versioned by the workspace API revision, Revision.
//
// Start: the Hub runs
//
//	<command...> session --workspace-id ID --path DIR --socket SOCK
//
// with a sanitized environment, in its own process group, stdin a pipe the
// Hub holds open for the child's life, stdout and stderr pipes.
//
// Readiness: the child changes into DIR (failing when DIR is not a
// directory), removes a stale socket at SOCK (refusing to remove anything
// else), listens on SOCK with mode 0600, serves HTTP on it, and only then
// writes exactly one line, "ready\n", to stdout. It writes nothing else to
// stdout; diagnostics go to stderr, which the Hub logs and never shows to
// clients. The Hub then confirms readiness with one GET FactsPath.
//
// Endpoints, all GET; the JSON ones answer with Cache-Control: no-store:
//
//	/_wharf/facts          {"workspaceApiRevision":24,"shells":[...]}   (Facts)
//	/s/{ID}/api/session    {"workspaceId":ID,"workspaceApiRevision":24} (Info)
//
// The Hub forwards client requests under /s/{ID}/ verbatim, so the child
// serves that base path itself; /_wharf/ is never forwarded. Any other
// path or method answers 404 {"error":"not found"}.
//
// Feeds: the upstreams of the Hub's live stream, one request per feed,
// each answered 200 with Content-Type text/event-stream and Cache-Control
// no-cache, then flushed at once so the Hub knows the feed is accepted.
// Frames are `event: NAME` and one `data: JSON` line, ended by a blank
// line; a ": keepalive" comment follows every 15 s of quiet. A stream ends
// when the Hub closes it or the child stops (ending it in order):
//
//	/_wharf/feeds/document?key=KEY      event: state     DocumentSnapshot first, then DocumentPatch
//	/_wharf/feeds/activity              event: activity  {"working":false,"awaiting":false} at once and on every change
//	/_wharf/feeds/inventory             event: inventory {"type":"conversation.inventory"} at once (the opening tick)
//	/_wharf/feeds/conversation?id=ID[&cursor=C]
//
// KEY is a LiveDocumentKey (the Hub sends the canonical spelling); a bad
// one answers 400, and the document feed answers 503 when it cannot run
// (package docfeed documents the frames). The document feed indexes and
// watches the folder from its first request until the child stops, so a
// workspace nobody reads documents of costs nothing, and readiness never
// waits for indexing. No agent runs in this build: activity never works
// nor awaits, the inventory is empty, and every conversation answers 404
// {"error":"unknown conversation"} (400 without exactly one id). The
// conversation feed, once agents exist, sends `event: open` {"cursor":C}
// first when opened without a cursor, then `event: chat` frames with `id:
// CURSOR`, or one `event: resync` after which it ends.
//
// Stop: SIGTERM (which the wharf command turns into the end of Main's
// ctx) makes the child end its feed streams, stop the document feed, shut
// its server down gracefully within a short bound, remove the socket and
// exit 0. EOF on stdin means the Hub is gone, even killed with SIGKILL,
// and ends the child the same way. The Hub kills the whole process
// group when the grace runs out, so anything the child started goes too.
package session

import (
	"context"
	"errors"
	"flag"
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

	"github.com/wharfhub/wharf/adapters/session/docfeed"
)

// ErrUsage marks an error in Main's arguments; the command exits 2 for it.
var ErrUsage = errors.New("usage")

// shutdownGrace bounds the graceful shutdown of the server; the Hub's own
// stop grace (3 s by default) is longer, so a polite stop normally wins.
const shutdownGrace = 2 * time.Second

// config is what the command line says.
type config struct {
	workspaceID, path, socket string
}

// Main runs the child with the arguments that follow `session` on the
// command line, until ctx ends (SIGTERM), stdin reaches EOF or serving
// fails. It writes the readiness line to stdout and logs to stderr. A nil
// error means a clean stop. Main returns without waiting for its read of
// stdin to end: a process exits anyway, and an in-process caller closes
// the reader.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	// The Hub reads stderr; once it is gone (killed, even), a log line
	// would raise SIGPIPE and kill the child before it cleans up. Ignored,
	// the write just fails.
	signal.Ignore(syscall.SIGPIPE)
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("workspace", cfg.workspaceID)
	// docfeed needs an absolute root; the Hub passes one, a person may not.
	if abs, err := filepath.Abs(cfg.path); err == nil {
		cfg.path = abs
	}
	if err := enterFolder(cfg.path); err != nil {
		return err
	}
	ln, err := listen(cfg.socket)
	if err != nil {
		return err
	}
	defer ln.remove()
	docs := newDocuments(docfeed.New(cfg.path, docfeed.Options{
		WorkspaceAPIRevision: Revision,
		KeepAlive:            DefaultKeepAlive,
		Logger:               log.With("feed", "document"),
	}), log)
	// Every request's context derives from streams: ending it ends the
	// feeds, which never go idle for Shutdown to close them.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           NewHandler(cfg.workspaceID, HandlerOptions{Documents: docs}),
		BaseContext:       func(net.Listener) context.Context { return streams },
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := io.WriteString(stdout, "ready\n"); err != nil {
		srv.Close()
		return fmt.Errorf("announce readiness: %w", err)
	}
	log.Debug("session ready", "path", cfg.path)

	var failed error
	select {
	case <-ctx.Done():
		log.Info("stopping: asked to terminate")
	case <-hubGone(stdin):
		log.Info("stopping: stdin closed, the Hub is gone")
	case err := <-served:
		failed = fmt.Errorf("serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Feeds end first, in order (the Hub reads the end of each stream),
	// then the document feed stops with everything it started.
	endStreams()
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

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("wharf session", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.workspaceID, "workspace-id", "", "`id` of the workspace")
	fs.StringVar(&c.path, "path", "", "workspace `directory`")
	fs.StringVar(&c.socket, "socket", "", "Unix `socket` to serve on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	case c.workspaceID == "" || c.path == "" || c.socket == "":
		return c, fmt.Errorf("%w: --workspace-id, --path and --socket are required", ErrUsage)
	}
	return c, nil
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

// hubGone returns a channel closed once stdin reaches EOF (or fails): the
// Hub holds the writing end for the child's life, so the kernel closes it
// when the Hub dies, however it dies. A nil stdin is never gone.
func hubGone(stdin io.Reader) <-chan struct{} {
	gone := make(chan struct{})
	if stdin == nil {
		return gone
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	return gone
}
