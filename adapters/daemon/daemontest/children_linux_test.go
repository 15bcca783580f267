package daemontest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

func TestTheSessionChildrenOfAStateDirectoryAreAwaited(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	// A stand-in child: its command line names a socket in dir, like a
	// `wharf session`'s, and it ends when its stdin does.
	cmd := exec.Command("sh", "-c", "read line", "session", "--socket", filepath.Join(dir, "sessions", "a.sock"))
	stdin, err := cmd.StdinPipe()
	is.NoErr(err)
	is.NoErr(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	is.Equal(sessionChildren(dir), []int{cmd.Process.Pid}) // found by its socket
	is.Equal(len(sessionChildren(t.TempDir())), 0)         // another state directory's are not
	stdin.Close()
	<-done
	awaitChildren(dir)
	is.Equal(len(sessionChildren(dir)), 0) // gone once its stdin closed
}
