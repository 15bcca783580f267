package daemon_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/statedir"
	"github.com/wharfhub/wharf/hub/service"
)

func privateDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOneDaemonPerStateDir opens a daemon, refuses a second one on the same
// directory, and lets an administration beside it in.
func TestOneDaemonPerStateDir(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	dir := privateDir(t)
	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir})
	is.NoErr(err) // the first daemon opens
	defer d.Close()

	_, err = daemon.Open(ctx, daemon.Config{StateDir: dir})
	is.True(errors.Is(err, statedir.ErrLocked)) // a second one is refused

	admin, err := daemon.Open(ctx, daemon.Config{StateDir: dir, Admin: true})
	is.NoErr(err) // administration works beside it
	is.NoErr(admin.Hub().AddUser(ctx, "ann", "a long password"))
	is.NoErr(admin.Close())

	users, err := d.Hub().Users(ctx)
	is.NoErr(err)
	is.Equal(len(users), 1) // the daemon sees the user the administration added
}

// TestAdaptSwapsAPort replaces one port before the Hub is built.
func TestAdaptSwapsAPort(t *testing.T) {
	is := is.New(t)
	called := false
	d, err := daemon.Open(t.Context(), daemon.Config{StateDir: privateDir(t), Adapt: func(p *service.Ports) {
		called = true
		is.True(p.Store != nil && p.Clock != nil && p.FS != nil && p.Git != nil && p.Backend != nil) // every real port is there
		p.Backend = nil
	}})
	is.True(called)     // Adapt ran
	is.True(err != nil) // and what it did took effect: a missing port is refused
	is.Equal(d, nil)
}

// TestServeShutsDownWithCtx serves the API and stops when ctx ends.
func TestServeShutsDownWithCtx(t *testing.T) {
	is := is.New(t)
	d, err := daemon.Open(t.Context(), daemon.Config{StateDir: privateDir(t)})
	is.NoErr(err)
	defer d.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln, nil) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/api/hub/state")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusUnauthorized) // the Hub API answers

	cancel()
	select {
	case err := <-served:
		is.NoErr(err) // a shutdown asked for is no error
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// A certificate file and ACME exclude each other; an administration
// (wharf user) beside an ACME daemon touches no certificate cache.
func TestOpenWithACME(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := privateDir(t)
	acme := daemon.ACME{Domain: "hub.example.com"}
	_, err := daemon.Open(ctx, daemon.Config{StateDir: dir, TLS: &tls.Config{}, ACME: acme})
	is.True(err != nil && strings.Contains(err.Error(), "TLS and ACME exclude each other")) // refused

	d, err := daemon.Open(ctx, daemon.Config{StateDir: dir, Admin: true, ACME: acme})
	is.NoErr(err) // an administration opens
	is.NoErr(d.Close())
	_, err = os.Stat(filepath.Join(dir, "acme"))
	is.True(errors.Is(err, os.ErrNotExist)) // without making the cache

	d, err = daemon.Open(ctx, daemon.Config{StateDir: dir, ACME: daemon.ACME{Domain: "hub"}})
	is.True(err != nil && strings.Contains(err.Error(), "single label")) // a name no certificate can have is refused
	if d != nil {
		d.Close()
	}
	d, err = daemon.Open(ctx, daemon.Config{StateDir: dir, ACME: acme})
	is.NoErr(err) // a daemon opens
	defer d.Close()
	fi, err := os.Stat(filepath.Join(dir, "acme"))
	is.NoErr(err)                                  // with its cache
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // private
}
