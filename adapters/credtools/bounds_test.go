package credtools_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/credtools"
	"github.com/wharfhub/wharf/hub"
)

// long is a bound a test does not mean to reach: when a probe ends
// sooner, it was not this bound that ended it.
const long = time.Minute

// TestAProbeThatOutlivesItsBoundIsKilled runs an ssh that prints its
// version and then hangs, with a child of its own: the bound (short
// here, 5 s by default) ends the probe, and both processes are killed.
func TestAProbeThatOutlivesItsBoundIsKilled(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	fifo, _, gone := watch(t, dir)
	sleep := quote(lookPath(t, "sleep"))
	exe := filepath.Join(dir, "ssh")
	script(t, exe, "exec 3>"+quote(fifo)+"\n"+sleep+" 1000 &\necho OpenSSH_9.2p1 >&2\nexec "+sleep+" 1000\n")
	p := credtools.New(credtools.Options{Timeout: 100 * time.Millisecond, WaitDelay: long})
	start := time.Now()
	rec := p.Probe(t.Context(), hub.ToolSSH, exe)
	is.True(time.Since(start) < long)                                                                                                   // neither sleep was waited for
	is.Equal(rec.Results[1], hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: hub.ToolMsgTimedOut}) // timed out
	is.Equal(rec.Version, "")                                                                                                           // not ready, whatever it printed
	within(t, gone, "the hung probe and its child are killed")
}

// TestAProbeThatFloodsIsKilledAtTheLimit runs tools that print without
// end, on stdout or stderr: the probe ends as soon as a stream passes 8
// KiB, long before its bound.
func TestAProbeThatFloodsIsKilledAtTheLimit(t *testing.T) {
	for _, stream := range []string{"", " >&2"} {
		t.Run("stream"+stream, func(t *testing.T) {
			is := is.New(t)
			dir := t.TempDir()
			fifo, _, gone := watch(t, dir)
			exe := filepath.Join(dir, "git")
			script(t, exe, "exec 3>"+quote(fifo)+"\necho 'git version 2.39.5'\nexec "+quote(lookPath(t, "yes"))+stream+"\n")
			rec := credtools.New(credtools.Options{Timeout: long, WaitDelay: long}).Probe(t.Context(), hub.ToolGit, exe)
			is.Equal(rec.Results[1].Message, hub.ToolMsgTooLong) // over the limit
			within(t, gone, "the flooding probe is killed")
		})
	}
}

// TestAChildHoldingTheOutputIsKilledWithTheProbe runs an ssh that
// answers and exits at once, leaving a child behind that holds its
// output open: the probe does not wait for the child (nor its WaitDelay)
// and kills it.
func TestAChildHoldingTheOutputIsKilledWithTheProbe(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	fifo, _, gone := watch(t, dir)
	exe := filepath.Join(dir, "ssh")
	script(t, exe, "exec 3>"+quote(fifo)+"\n"+quote(lookPath(t, "sleep"))+" 1000 &\necho OpenSSH_9.2p1 >&2\nexit 0\n")
	start := time.Now()
	rec := credtools.New(credtools.Options{Timeout: long, WaitDelay: long}).Probe(t.Context(), hub.ToolSSH, exe)
	is.True(time.Since(start) < long)      // neither bound was reached
	is.Equal(rec.Version, "OpenSSH_9.2p1") // the answer counts
	within(t, gone, "the child is killed")
}

// TestAnEndedContextStopsTheProbe cancels, or lets pass the deadline of,
// a probe's context while the probe hangs: it is cancelled or timed out,
// and killed.
func TestAnEndedContextStopsTheProbe(t *testing.T) {
	for _, c := range []struct {
		name string
		why  string
	}{{"cancelled", hub.ToolMsgCancelled}, {"deadline", hub.ToolMsgTimedOut}} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			dir := t.TempDir()
			fifo, opened, gone := watch(t, dir)
			exe := filepath.Join(dir, "git")
			script(t, exe, "exec 3>"+quote(fifo)+"\nexec "+quote(lookPath(t, "sleep"))+" 1000\n")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if c.name == "deadline" {
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			}
			got := make(chan hub.CredentialTool, 1)
			go func() {
				got <- credtools.New(credtools.Options{Timeout: long, WaitDelay: long}).Probe(ctx, hub.ToolGit, exe)
			}()
			within(t, opened, "the probe starts")
			if c.name == "cancelled" {
				cancel()
			}
			select {
			case rec := <-got:
				is.Equal(rec.Results[1].Message, c.why) // why it stopped
			case <-time.After(deadline):
				t.Fatal("the probe did not stop")
			}
			within(t, gone, "the probe is killed")
		})
	}
}

// TestAProbeGetsOnlyPathAndTheCLocale runs an ssh that records its
// environment, working folder and stdin, from a Hub whose environment
// holds secrets.
func TestAProbeGetsOnlyPathAndTheCLocale(t *testing.T) {
	is := is.New(t)
	t.Setenv("SSH_AUTH_SOCK", "/run/user/agent.sock")
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("GIT_DIR", "/somewhere/.git")
	dir := t.TempDir()
	exe, env, cwd, stdin := filepath.Join(dir, "ssh"), filepath.Join(dir, "env"), filepath.Join(dir, "cwd"), filepath.Join(dir, "stdin")
	script(t, exe, quote(lookPath(t, "env"))+" >"+quote(env)+"\n"+
		"pwd >"+quote(cwd)+"\n"+
		quote(lookPath(t, "readlink"))+" /proc/self/fd/0 >"+quote(stdin)+"\n"+
		"echo OpenSSH_9.2p1 >&2\n")
	hubPath := "/nowhere/bin:" + dir
	rec := credtools.New(credtools.Options{Path: hubPath}).Probe(t.Context(), hub.ToolSSH, "")
	is.Equal(rec.Version, "OpenSSH_9.2p1") // found on the Hub's PATH and ran

	vars := readLines(t, env)
	vars = slices.DeleteFunc(vars, func(v string) bool { return v == "PWD=/" }) // the shell's own, from its working folder
	slices.Sort(vars)
	is.Equal(vars, []string{"LANG=C", "LC_ALL=C", "PATH=" + hubPath}) // nothing else of the Hub's
	is.Equal(readLines(t, cwd), []string{"/"})                        // in "/", nobody's work tree
	if runtime.GOOS == "linux" {
		is.Equal(readLines(t, stdin), []string{os.DevNull}) // with nothing to read
	}
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
