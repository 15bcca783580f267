package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// env is a Hub over fakes, for the workspace, folder and journal tests.
// Its parts outlive the Hub, so restart can build the next Hub over the
// same store and disk, as a restarted daemon would.
type env struct {
	*service.Hub
	t       *testing.T
	ctx     context.Context
	store   *fakes.Store
	clock   *fakes.Clock
	fs      *fakes.FS
	git     *fakes.Git
	backend *fakes.Backend
	vault   *fakes.KeyVault
	tools   *fakes.ToolProber
	agent   *fakes.FakeAgent // "codex", whose logins the Hub manages
	pusher  *fakes.Pusher
	hosts   *fakes.Hosts // the other machines
	ann     hub.DeviceSession
	cfg     service.Config // the Hub's, but for its cheap password
}

const home = "/home/ann"

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, service.Config{})
}

// newEnvWith is newEnv whose Hubs take cfg.
func newEnvWith(t *testing.T, cfg service.Config) *env {
	t.Helper()
	fsys := fakes.NewFS(home)
	e := &env{t: t, ctx: context.Background(), store: fakes.NewStore(), cfg: cfg,
		clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		fs:    fsys, git: fakes.NewGit(fsys), backend: fakes.NewBackend(), tools: fakes.NewToolProber(),
		agent: fakes.NewFakeAgent("codex", "Codex"), pusher: fakes.NewPusher(), hosts: fakes.NewHosts()}
	e.vault = fakes.NewKeyVault(e.clock)
	e.backend.Data = fsys // the workspaces' data directories live on the same disk
	e.open()
	e.ann = e.user("ann")
	return e
}

// open builds a Hub over e's parts and recovers.
func (e *env) open() {
	e.t.Helper()
	cfg := e.cfg
	cfg.Password = cheap
	h, err := service.New(cfg, service.Ports{Store: e.store, Clock: e.clock, FS: e.fs, Git: e.git, Backend: e.backend, Vault: e.vault, Tools: e.tools, AgentLogins: fakes.NewAgentLogins(e.agent), Pusher: e.pusher, Hosts: e.hosts})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { h.Close() })
	e.Hub = h
	if err := h.Recover(e.ctx); err != nil {
		e.t.Fatalf("recover: %v", err)
	}
}

// restart closes the Hub and opens a new one over the same store and disk,
// with a fresh backend (the old children died with the old Hub).
func (e *env) restart() {
	e.t.Helper()
	e.Hub.Close()
	e.backend = fakes.NewBackend()
	e.backend.Data = e.fs
	e.vault = fakes.NewKeyVault(e.clock) // a new process holds no key in memory
	e.open()
}

// user adds a Hub user and returns a session value for it.
func (e *env) user(name string) hub.DeviceSession {
	e.t.Helper()
	if err := e.Hub.AddUser(e.ctx, name, "correct horse battery"); err != nil {
		e.t.Fatal(err)
	}
	return hub.DeviceSession{User: name}
}

// dir makes a directory (and its ancestors) on the fake disk.
func (e *env) dir(p string) string {
	e.fs.MkdirAll(p)
	return p
}

// repo makes a directory holding a Git repository.
func (e *env) repo(p string) string {
	e.t.Helper()
	e.dir(p)
	if err := e.git.Init(e.ctx, p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// register registers p (a repository) stopped and returns its id.
func (e *env) register(p string) string {
	e.t.Helper()
	act, err := e.Register(e.ctx, hub.RegisterRequest{Path: p})
	if err != nil {
		e.t.Fatalf("register %s: %v", p, err)
	}
	return act.ID
}

// start starts id or fails the test.
func (e *env) start(id string) {
	e.t.Helper()
	if _, err := e.StartWorkspace(e.ctx, id); err != nil {
		e.t.Fatalf("start %s: %v", id, err)
	}
}

// workspaces returns the stored registry.
func (e *env) workspaces() []hub.Workspace {
	e.t.Helper()
	var ws []hub.Workspace
	if err := e.store.View(e.ctx, func(tx hub.Tx) error {
		var err error
		ws, err = tx.Workspaces()
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return ws
}

// journals returns the stored journals.
func (e *env) journals() []hub.Journal {
	e.t.Helper()
	var js []hub.Journal
	if err := e.store.View(e.ctx, func(tx hub.Tx) error {
		var err error
		js, err = tx.Journals()
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return js
}

// pathOf returns the registered path of id, or "" when it is not registered.
func (e *env) pathOf(id string) string {
	for _, w := range e.workspaces() {
		if w.ID == id {
			return w.Path
		}
	}
	return ""
}

// isDir reports a directory on the fake disk.
func (e *env) isDir(p string) bool {
	fi, err := e.fs.Lstat(p)
	return err == nil && fi.IsDir()
}

// errDetails returns the details of a hub.Error, or nil.
func errDetails(err error) *hub.Details {
	var he *hub.Error
	if errors.As(err, &he) {
		return he.Details
	}
	return nil
}

// failOn makes the fake disk refuse op on p with err (once).
func (e *env) failOn(op, p string, err error) {
	fired := false
	e.fs.Before = func(o, q string) error {
		if !fired && o == op && q == p {
			fired = true
			return err
		}
		return nil
	}
}
