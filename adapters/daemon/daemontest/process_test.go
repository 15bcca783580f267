package daemontest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// TestDaemonLifecycle starts a real daemon, logs in, kills it, restarts it
// on the same state directory (the device session survives), stops it
// gracefully, and runs a command beside it.
func TestDaemonLifecycle(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := t.Context()
	stateDir := filepath.Join(t.TempDir(), "state")
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: stateDir})
	is.NoErr(err) // the daemon serves
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	is.Equal(fileMode(t, stateDir), os.FileMode(0o700)) // in a private state directory

	pw, err := d.FirstUserPassword()
	is.NoErr(err) // from the file the banner names
	c, resp, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)                            // the first user logs in
	is.Equal(resp.StatusCode, http.StatusOK) // with 200
	_, err = c.State(ctx)
	is.NoErr(err) // and reads the state

	is.NoErr(d.Kill())             // SIGKILL
	is.True(d.Kill() == nil)       // a second Kill still sees the SIGKILL
	_, err = d.FirstUserPassword() // the file is still there, and d's banner names it
	is.NoErr(err)
	d2, err := d.Restart(ctx)
	is.NoErr(err) // the restart serves on the same state directory
	t.Cleanup(func() { d2.Kill() })
	is.True(d2.URL() != "") // at its own address
	_, err = d2.FirstUserPassword()
	is.True(err != nil) // having created no user
	_, err = c.At(d2.URL()).State(ctx)
	is.NoErr(err) // the device session survived

	out, err := d2.Command(ctx, "user", "list").Output()
	is.NoErr(err)                                                      // a command beside the daemon
	is.True(strings.HasPrefix(string(out), daemontest.FirstUser+"\t")) // sees its state directory

	is.NoErr(d2.Stop(ctx))    // SIGTERM: a graceful shutdown, exit 0
	is.True(d2.Kill() != nil) // which Kill reports as no kill
	d3, err := d2.Restart(ctx)
	is.NoErr(err) // and the state directory serves again
	t.Cleanup(func() { d3.Kill() })
	is.NoErr(d3.Stop(ctx)) // until stopped
}

func fileMode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
