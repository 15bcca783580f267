package daemontest

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestStateModes(t *testing.T) {
	is := is.New(t)
	dir := filepath.Join(t.TempDir(), "state")
	is.NoErr(os.Mkdir(dir, 0o700))                                          // the state directory
	is.NoErr(os.Mkdir(filepath.Join(dir, "sessions"), 0o700))               // a private subdirectory
	is.NoErr(os.WriteFile(filepath.Join(dir, "wharf.db"), nil, 0o600))      // a private file
	ln, err := net.Listen("unix", filepath.Join(dir, "sessions", "a.sock")) // a socket
	is.NoErr(err)
	defer ln.Close()
	is.NoErr(os.Chmod(filepath.Join(dir, "sessions", "a.sock"), 0o600)) // made private
	checked, problems, err := StateModes(dir)
	is.NoErr(err)                                                                                                   // walked
	is.Equal(len(problems), 0)                                                                                      // all private
	is.Equal(len(checked), 4)                                                                                       // the directory, sessions/, the socket and the file
	is.True(slices.ContainsFunc(checked, func(c string) bool { return strings.HasPrefix(c, "sessions/a.sock S") })) // the socket as a socket

	is.NoErr(os.Chmod(filepath.Join(dir, "wharf.db"), 0o644))           // a readable file
	is.NoErr(os.Chmod(filepath.Join(dir, "sessions", "a.sock"), 0o666)) // a socket anyone may connect to
	is.NoErr(os.Symlink("/etc/passwd", filepath.Join(dir, "link")))     // a symbolic link
	is.NoErr(os.Chmod(dir, 0o750))                                      // a directory the group may list
	_, problems, err = StateModes(dir)
	is.NoErr(err) // walked
	slices.Sort(problems)
	is.Equal(problems, []string{
		". has mode 0750, want 0700",
		"link is a L---------, neither a directory, a file nor a socket",
		"sessions/a.sock has mode 0666, want 0600",
		"wharf.db has mode 0644, want 0600",
	}) // each named
}
