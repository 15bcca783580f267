package sshhost_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestBackend(t *testing.T) {
	// One host for the whole suite, each test with its own Hub side
	// (runtime folder, master): the binary is copied once.
	srv := sshdtest.Start(t)
	client, root := srv.NewClient(t, shortDir(t), ""), shortDir(t)
	porttest.Backend(t, func(t *testing.T) (hub.Backend, string) {
		r := newRigOn(t, srv, client, root, nil)
		// The host is this machine: a folder of the test is a folder on
		// the host. A small one keeps the document feed's indexing quick.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# alpha\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return r.host, dir
	})
}

func TestAdopter(t *testing.T) {
	t.Parallel() // its own sshd and folders
	// One host; each Hub a Host of its own on it, with its own runtime
	// folder and master, as a restarted Hub would have.
	srv := sshdtest.Start(t)
	client, root := srv.NewClient(t, shortDir(t), ""), shortDir(t)
	dirs := map[*testing.T]string{}
	porttest.Adopter(t, func(t *testing.T) (hub.Backend, string) {
		r := newRigOn(t, srv, client, root, func(o *sshhost.Options) { o.DetachGrace = time.Minute })
		if dirs[t] == "" {
			dirs[t] = t.TempDir()
		}
		return r.host, dirs[t]
	})
}
