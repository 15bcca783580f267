package gitexec_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/hub"
)

// TestTimeoutIsAnInternalError runs a fake git that hangs: the call ends
// at the timeout with gitexec's fixed public message. (That the timeout
// kills git's whole process group is gitcmd's to test.)
func TestTimeoutIsAnInternalError(t *testing.T) {
	is := is.New(t)
	dir := tempDir(t)
	script := fakeexec.Script(t, filepath.Join(dir, "git"), "exec sleep 60\n")
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	r := gitexec.New(gitexec.Options{Git: script, Timeout: 200 * time.Millisecond, Env: testEnv(t), Logger: log})

	done := make(chan error, 1)
	go func() {
		_, err := r.Inspect(t.Context(), dir)
		done <- err
	}()
	select {
	case err := <-done:
		is.True(err != nil)                                  // a hung git is an error
		is.Equal(hub.KindOf(err), hub.Internal)              // an internal failure
		is.Equal(hub.MessageOf(err), "git rev-parse failed") // with a fixed public message
		is.True(strings.Contains(err.Error(), "timed out"))  // the cause says why
	case <-time.After(10 * time.Second):
		t.Fatal("Inspect did not return after its timeout")
	}
}
