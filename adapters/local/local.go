// Package local is the Backend "local": each workspace session is a child
// OS process on the Hub's machine, the Hub's own binary run as
// `wharf session` (adapters/child is that command; the internal
// protocol it speaks over a Unix socket is adapters/internal/childproto).
//
// A child gets a sanitized environment, its own process group (so a stop
// or a crash takes everything it started along), stdin a pipe this package
// holds open for the child's life (EOF tells the child the Hub died), and
// a socket inside the private runtime directory. One goroutine per child
// always waits for it, so no child is left a zombie, and every exit, asked
// for or not, kills the child's group and removes its socket. The child's
// stderr goes to the logger only, never into an error a client sees.
//
// Before a child starts, its hub.SessionCredentials are projected into a
// private runtime folder beside its socket (adapters/internal/credenv
// says what a child gets and why): its own SSH agent, a credential socket
// the Hub serves for `wharf git-credential` and `wharf gpg`, and
// generated git and ssh configs, with every ambient credential variable
// removed. The folder goes when the child is reaped.
//
// Facts, feeds and forwarded requests all reach the child over its socket,
// and a stop escalates from SIGTERM to SIGKILL: that part of the
// lifecycle is shared with the other backends (adapters/internal/childrun);
// this package keeps what is local — spawning the process, its group, its
// credential projection and data directory.
package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

var _ hub.Backend = (*Backend)(nil)

// Defaults of the Options durations.
const (
	DefaultReadyTimeout = 10 * time.Second
	DefaultStopGrace    = 3 * time.Second
)

// Options configure a Backend. The zero value of each optional field picks
// its default.
type Options struct {
	// RuntimeDir holds the sessions' sockets and runtime folders: a
	// private directory inside the state directory. Required. It is
	// created with mode 0700 when missing and refused when it is open to
	// group or others, is not a directory, or is too long to hold a
	// session folder's sockets (Unix socket paths are limited to about
	// 100 bytes).
	RuntimeDir string
	// Command starts a child; the session arguments follow it. Default: the
	// running executable. Tests point it at a re-executed test binary. A
	// session's git runs it too, as `git-credential` and `gpg`.
	Command []string
	// Env is the base environment the child's is filtered from
	// (credenv.AgentEnv: the basics and each coding agent's store
	// locators, so a session's agents find the logins made on the Hub).
	// Default: os.Environ() at each Start.
	Env []string
	// ReadyTimeout bounds how long a child may take to become ready.
	// Default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL, and
	// then again for the kill to be confirmed. Default DefaultStopGrace.
	StopGrace time.Duration
	// Logger receives the children's stderr and lifecycle events. Default:
	// discard.
	Logger *slog.Logger
	// DataDir, when set, holds one private directory per workspace (mode
	// 0700, named by a hash of the workspace id, made at the workspace's
	// first start) that its child keeps its state in across restarts of
	// the child and of the Hub: the conversation inventory. It is created
	// with mode 0700 and refused when open to group or others. "" gives
	// the children none (they keep nothing).
	DataDir string
	// AgentCommands sets the command of a coding agent by id (a known one,
	// or a new one) in every child (childproto.Args.Agents).
	AgentCommands map[string][]string
}

// Backend is the local hub.Backend. It is safe for concurrent use.
type Backend struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]string // socket path -> workspace id, from spawn to reap

	// live counts children spawned and not yet reaped; spawned, when set,
	// learns every child's pid. Both serve the tests.
	live    atomic.Int64
	spawned func(pid int)
}

// socketNameLen is the length of a socket's file name: 12 hex digits of
// the SHA-256 of the workspace id, then ".sock". Hashing keeps the name
// short and free of any character an id may hold.
const socketNameLen = 12 + len(".sock")

// maxSocketPath is the longest path a Unix socket can bind here: sun_path
// less its terminating NUL (107 bytes on Linux, 103 on the BSDs).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// New returns a Backend after preparing opts.RuntimeDir.
func New(opts Options) (*Backend, error) {
	if opts.RuntimeDir == "" {
		return nil, errors.New("local backend: no runtime directory")
	}
	dir, err := filepath.Abs(opts.RuntimeDir)
	if err != nil {
		return nil, fmt.Errorf("local backend: runtime directory: %w", err)
	}
	if n := len(dir) + 1 + max(socketNameLen, 12+1+len(credenv.LongestSocketName)); n > maxSocketPath {
		return nil, fmt.Errorf("local backend: runtime directory %s is too long for Unix sockets "+
			"(%d bytes of at most %d); choose a shorter state directory", dir, n, maxSocketPath)
	}
	if err := credenv.CheckDir(dir); err != nil { // at start, rather than at each session's
		return nil, fmt.Errorf("local backend: runtime directory: %w; choose another state directory", err)
	}
	if err := childrun.PrivateDir(dir); err != nil {
		return nil, fmt.Errorf("local backend: %w", err)
	}
	opts.RuntimeDir = dir
	if opts.DataDir != "" {
		if opts.DataDir, err = filepath.Abs(opts.DataDir); err != nil {
			return nil, fmt.Errorf("local backend: data directory: %w", err)
		}
		if err := childrun.PrivateDir(opts.DataDir); err != nil {
			return nil, fmt.Errorf("local backend: data %w", err)
		}
	}
	if len(opts.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("local backend: own executable: %w", err)
		}
		opts.Command = []string{exe}
	} else {
		opts.Command = slices.Clone(opts.Command)
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Backend{opts: opts, log: log.With("backend", "local"), sessions: map[string]string{}}, nil
}

// Name reports "local".
func (b *Backend) Name() string { return "local" }

// Start spawns the child of spec and returns once it printed its readiness
// line and answered a facts call, within ReadyTimeout and ctx. On any
// failure the child's group is killed and the child reaped before Start
// returns. Starting a workspace whose session is still running is a
// Conflict: two children would fight over one socket.
func (b *Backend) Start(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, childrun.StartInterrupted(err)
	}
	if spec.WorkspaceID == "" {
		return nil, hub.Errorf(hub.Internal, "session has no workspace id")
	}
	if fi, err := os.Stat(spec.Path); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a directory", spec.Path)
		}
		return nil, hub.Wrap(hub.Internal, err, "workspace folder is missing or not a directory")
	}
	sock := b.socketPath(spec.WorkspaceID)
	if err := b.reserve(sock, spec.WorkspaceID); err != nil {
		return nil, err
	}
	base := b.opts.Env
	if base == nil {
		base = os.Environ()
	}
	proj, err := b.project(ctx, spec, base)
	if err != nil {
		b.release(sock)
		b.log.Error("session credentials could not be prepared", "workspace", spec.WorkspaceID, "err", err)
		return nil, hub.Wrap(hub.Internal, err, "the session's credentials could not be prepared")
	}
	s, err := b.spawn(spec, sock, base, proj)
	if err != nil {
		proj.Close()
		b.release(sock)
		return nil, err
	}
	if err := s.AwaitReady(ctx); err != nil {
		s.Abort(err)
		return nil, err
	}
	b.log.Debug("session started", "workspace", spec.WorkspaceID, "pid", s.pid)
	return s, nil
}

// dataDir makes the private data directory of workspace id (dataPath);
// "" without a DataDir.
func (b *Backend) dataDir(id string) (string, error) {
	if b.opts.DataDir == "" {
		return "", nil
	}
	dir := b.dataPath(id)
	return dir, childrun.PrivateDir(dir)
}

// dataPath is the data directory of workspace id: 16 hex digits of the
// SHA-256 of the id under DataDir.
func (b *Backend) dataPath(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(b.opts.DataDir, hex.EncodeToString(sum[:8]))
}

// RemoveWorkspaceData removes the data directory of workspace id and
// everything in it. The name is the Backend's own (a hash, inside the
// private DataDir), and os.RemoveAll removes links rather than follow
// them, so nothing outside it goes. A session of id still running is a
// Conflict: its child keeps files there.
func (b *Backend) RemoveWorkspaceData(ctx context.Context, id string) error {
	b.mu.Lock()
	running := slices.Contains(slices.Collect(maps.Values(b.sessions)), id)
	b.mu.Unlock()
	switch {
	case running:
		return hub.Errorf(hub.Conflict, "the session of this workspace is running")
	case b.opts.DataDir == "":
		return nil
	}
	if err := os.RemoveAll(b.dataPath(id)); err != nil {
		b.log.Error("workspace data could not be removed", "workspace", id, "err", err)
		return hub.Wrap(hub.Internal, err, "workspace data could not be removed")
	}
	return nil
}

// socketPath is where the session of id listens.
func (b *Backend) socketPath(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(b.opts.RuntimeDir, hex.EncodeToString(sum[:6])+".sock")
}

// reserve claims sock for a new child of id until release.
func (b *Backend) reserve(sock, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch other, ok := b.sessions[sock]; {
	case !ok:
		b.sessions[sock] = id
		return nil
	case other == id:
		return hub.Errorf(hub.Conflict, "the session of this workspace is already running")
	default:
		// 48 bits of SHA-256 make this a curiosity, but never a shared socket.
		return hub.Errorf(hub.Internal, "session socket name collision; try again after stopping another session")
	}
}

func (b *Backend) release(sock string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sessions, sock)
}

// spawn starts the child of spec with its pipes and the goroutines that
// read them and wait for it, in base's environment as proj has it. Once
// the child started, its session owns proj and closes it when reaped.
func (b *Backend) spawn(spec hub.WorkspaceSessionSpec, sock string, base []string, proj *credenv.Projection) (*workspaceSession, error) {
	data, err := b.dataDir(spec.WorkspaceID)
	if err != nil {
		b.log.Error("session data directory", "workspace", spec.WorkspaceID, "err", err)
		return nil, hub.Wrap(hub.Internal, err, "session could not be started")
	}
	args := append(slices.Clone(b.opts.Command[1:]),
		childproto.Args{WorkspaceID: spec.WorkspaceID, Path: spec.Path, Socket: sock, DataDir: data,
			Agents: b.opts.AgentCommands}.Argv()...)
	cmd := exec.Command(b.opts.Command[0], args...)
	cmd.Env = proj.Apply(base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	p, err := childrun.NewPipes()
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "session could not be started")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.ChildEnds()
	err = cmd.Start()
	p.CloseChildEnds() // the child holds its own copies now
	if err != nil {
		p.CloseOurEnds()
		b.log.Error("session could not be started", "workspace", spec.WorkspaceID, "err", err)
		return nil, hub.Wrap(hub.Internal, err, "session could not be started")
	}
	b.live.Add(1)
	if b.spawned != nil {
		b.spawned(cmd.Process.Pid)
	}
	s := &workspaceSession{b: b, sock: sock, cmd: cmd, pid: cmd.Process.Pid, pipes: p, proj: proj}
	s.Session = childrun.New(childrun.Config{
		WorkspaceID: spec.WorkspaceID, Socket: sock, Process: s, Terminate: "SIGTERM",
		ReadyTimeout: b.opts.ReadyTimeout, StopGrace: b.opts.StopGrace,
		Log: b.log.With("workspace", spec.WorkspaceID, "pid", s.pid),
	})
	go s.ReadStdout(p.StdoutR)
	go s.ReadStderr(p.StderrR)
	go s.reap()
	return s, nil
}
