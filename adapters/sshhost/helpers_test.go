package sshhost_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// testTimeout bounds every wait of a test.
const testTimeout = 60 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// shortDir is a fresh directory with a short path: sockets go in it.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// rig is a Host of a loopback sshd, with its remote root in a temporary
// folder (sshd runs as the test's user: the "remote home" is the real
// one, never touched).
type rig struct {
	srv    *sshdtest.Server
	client sshdtest.Client
	host   *sshhost.Host
	opts   sshhost.Options
	root   string // the remote root
	logs   *syncBuffer
}

// newRig starts an sshd and a Host of it; change adjusts the options.
func newRig(t *testing.T, change func(*sshhost.Options)) *rig {
	t.Helper()
	srv := sshdtest.Start(t)
	return newRigOn(t, srv, srv.NewClient(t, shortDir(t), ""), shortDir(t), change)
}

// newRigOn is a Host of srv, logged in as client, with its remote root
// at root: rigs that share a root share the copied binary.
func newRigOn(t *testing.T, srv *sshdtest.Server, client sshdtest.Client, root string, change func(*sshhost.Options)) *rig {
	t.Helper()
	r := &rig{srv: srv, client: client, root: root, logs: &syncBuffer{}}
	r.opts = sshhost.Options{
		Name: "build1", Destination: r.client.Alias, RuntimeDir: filepath.Join(shortDir(t), "rt"),
		SSH: []string{"ssh", "-F", r.client.Config}, RemoteRoot: r.root,
		Logger:    slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StopGrace: time.Second,
		// A session a test leaves (a partition, a crash of sshd) ends soon
		// after: the tests that let one go and adopt it set more.
		DetachGrace: time.Second,
		// The test child's mode and race options, which the client sends.
		KeepEnv: []string{modeEnv, "GORACE"},
	}
	if change != nil {
		change(&r.opts)
	}
	r.host = r.newHost(t)
	return r
}

// newHost is another Host of the rig's options, closed at the test's end.
func (r *rig) newHost(t *testing.T) *sshhost.Host {
	t.Helper()
	h, err := sshhost.New(r.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if t.Failed() {
			t.Logf("host log:\n%s\nsshd log:\n%s", r.logs, r.srv)
		}
	})
	return h
}

// start starts a session of id in a fresh folder and stops it at the end
// of the test.
func (r *rig) start(t *testing.T, id string) hub.WorkspaceSession {
	t.Helper()
	rs, err := r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: id, Path: t.TempDir()})
	if err != nil {
		t.Fatalf("start %s: %v\nhost log:\n%s\nsshd log:\n%s", id, err, r.logs, r.srv)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := rs.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return rs
}

// syncBuffer is a log buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
