package daemontest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
)

// HostWorkspaceFamily is WorkspaceFamily on another machine: a loopback
// sshd (started for t, its sessions' home a folder of t's) that every
// daemon of the run reaches as the host "crash" (`--ssh-config`). Its
// folders, registrations, journaled renames and removals run there,
// through the copied binary, and the journals a kill leaves are settled
// from that machine's disk by the next daemon once it reaches the host.
// The host is the test's own machine, so the writer prepares folders on
// its disk as WorkspaceFamily does. Without sshd installed it is nil,
// and says so on stderr (.ci/run installs it).
func HostWorkspaceFamily(t testing.TB) *Family {
	t.Helper()
	if _, ok := sshdtest.Lookup("sshd"); !ok {
		fmt.Fprintln(os.Stderr, "crash load: sshd is not installed, so the host-workspaces family does not run (apt-get install openssh-server; .ci/run does)")
		return nil
	}
	dir, err := os.MkdirTemp("", "wcr") // short: the master's socket lives below the state directory, not here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	srv := sshdtest.StartHome(t, home)
	client := srv.NewClient(t, dir, "")
	fam := WorkspaceFamily()
	fam.Name, fam.Backend = "host-workspaces", "ssh:"+crashHost
	fam.Prepare = func(context.Context, string) ([]string, func(), error) {
		return []string{"--ssh-config", client.Config}, func() {}, nil
	}
	boxes := fam.Setup
	fam.Setup = func(ctx context.Context, w *Writer) error {
		status, body, err := w.Client.Do(ctx, "POST", "api/hub/hosts",
			map[string]string{"name": crashHost, "destination": client.Alias}, nil)
		switch {
		case err != nil:
			return err
		case status != http.StatusCreated && status != http.StatusConflict: // another writer added it
			return fmt.Errorf("add the host: %d %s", status, body)
		}
		return boxes(ctx, w)
	}
	return fam
}

// crashHost names the crash load's host.
const crashHost = "crash"
