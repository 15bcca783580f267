package gitcmd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// TestMain lets the test binary stand for a Hub that runs git and dies.
func TestMain(m *testing.M) {
	if git := os.Getenv("GITCMD_TEST_ORPHANING_GIT"); git != "" {
		// A Hub running one git command, until it is killed.
		_, _ = gitcmd.New(gitcmd.Options{Git: git, Timeout: time.Minute}).Run(context.Background(), "/", "version")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A git the Hub started dies with the Hub: a killed Hub must not leave a
// git changing a tree the next Hub's recovery has settled already.
func TestAGitDiesWithTheHubThatStartedIt(t *testing.T) {
	is := is.New(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	git := fakeGit(t, "echo $$ > '"+pidFile+"'\nexec sleep 60\n")
	hub := exec.Command(os.Args[0], "-test.run=^$")
	hub.Env = append(os.Environ(), "GITCMD_TEST_ORPHANING_GIT="+git)
	is.NoErr(hub.Start()) // a Hub runs git
	var pid int
	deadline := time.After(testWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for pid == 0 {
		select {
		case <-deadline:
			hub.Process.Kill()
			t.Fatal("git never started")
		case <-tick.C:
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	is.NoErr(hub.Process.Kill()) // the Hub is killed
	_ = hub.Wait()
	for alive(pid) {
		select {
		case <-deadline:
			t.Fatalf("git %d outlived the Hub that started it", pid)
		case <-tick.C:
		}
	}
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}
