package credtools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
)

// TestOutputHeldByAProcessThatLeftTheGroupIsCutOff runs a probe whose
// child leaves the process group (setsid) and keeps the output open after
// the probe exited: killing the group cannot reach it, so WaitDelay
// closes the output, and the probe reads as not finished.
func TestOutputHeldByAProcessThatLeftTheGroupIsCutOff(t *testing.T) {
	is := is.New(t)
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	sleep, err := exec.LookPath("sleep")
	is.NoErr(err) // sleep is installed
	dir := t.TempDir()
	sync, pidFile := filepath.Join(dir, "sync"), filepath.Join(dir, "pid")
	is.NoErr(syscall.Mkfifo(sync, 0o600))
	exe := filepath.Join(dir, "ssh")
	// The child tells its pid, then the probe goes on: by then it has
	// left the group.
	body := setsid + " /bin/sh -c 'echo $$ >" + pidFile + "; echo >" + sync + "; exec " + sleep + " 1000' &\n" +
		"read _ <" + sync + "\necho OpenSSH_9.2p1 >&2\nexit 0\n"
	fakeexec.Script(t, exe, body)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL) // the test's own escapee
			}
		}
	})

	p := New(Options{Timeout: time.Minute, WaitDelay: 100 * time.Millisecond})
	start := time.Now()
	o := p.run(t.Context(), exe, "-V")
	is.True(time.Since(start) < time.Minute)      // ended by WaitDelay, not the bound
	is.True(o.heldOpen)                           // the output was cut off
	is.True(!o.timedOut)                          // the probe itself exited
	is.Equal(o.exit, 0)                           // by itself
	is.Equal(string(o.stderr), "OpenSSH_9.2p1\n") // what it said is kept
	_, why := verdict("ssh", o)
	is.Equal(why, "Version probe timed out.") // and it is not taken for ssh
}
