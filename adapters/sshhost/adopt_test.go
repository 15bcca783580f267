//go:build linux

package sshhost_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// graceOf sets the sessions' detach grace.
func graceOf(d time.Duration) func(*sshhost.Options) {
	return func(o *sshhost.Options) { o.DetachGrace = d }
}

// ended waits, up to testTimeout, for rs to end.
func ended(t *testing.T, rs hub.WorkspaceSession) bool {
	t.Helper()
	select {
	case <-rs.Done():
		return true
	case <-time.After(testTimeout):
		return false
	}
}

func TestARestartedHubAdoptsTheSessionItsPredecessorLetGo(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, graceOf(time.Minute))
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()}
	rs, err := r.host.Start(testContext(t), spec)
	is.NoErr(err) // a session of the Hub before its restart
	pid := sshhost.RemotePid(rs)
	rs.(hub.SessionDetacher).Detach()
	is.True(ended(t, rs))       // let go, it is done for that Hub
	is.NoErr(r.host.Close())    // which closes its connection and exits
	is.True(groupAlive(t, pid)) // while the session runs on there
	restarted := r.newHost(t)   // the next Hub
	_, err = restarted.Adopt(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "beta", Path: spec.Path})
	is.Equal(hub.KindOf(err), hub.NotFound) // finds no session of another workspace

	a, err := restarted.Adopt(testContext(t), spec)
	is.NoErr(err)           // adopts this one
	is.NoErr(factsOf(t, a)) // which answers through the new forward
	is.Equal(restarted.Live(), int64(1))
	_, err = restarted.Adopt(testContext(t), spec)
	is.Equal(hub.KindOf(err), hub.NotFound) // and is adopted once
	reaped, err := restarted.Reap(testContext(t))
	is.NoErr(err)
	is.Equal(len(reaped), 0)    // the reap leaves an adopted session alone
	is.True(groupAlive(t, pid)) // the same process as before the restart

	a.(hub.SessionDetacher).Detach() // let go and adopted again, as at a second restart
	is.True(ended(t, a))
	is.True(groupAlive(t, pid))
	again, err := restarted.Adopt(testContext(t), spec)
	is.NoErr(err) // adopted again

	script := parentOf(pid)
	is.NoErr(again.Stop(testContext(t))) // an adopted session stops politely
	is.True(waitGone(t, pid) && waitGone(t, script))
	is.True(!groupAlive(t, pid))                            // nothing of it runs
	is.True(strings.Contains(r.logs.String(), "exited"))    // it ended as asked
	is.Equal(restarted.Live(), int64(0))                    // nothing is held
	is.Equal(entries(t, filepath.Join(r.root, "run")), nil) // and its script left nothing on the host
}

func TestASessionNoHubAdoptsEndsAfterItsGrace(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, graceOf(500*time.Millisecond))
	rs := r.start(t, "alpha")
	pid := sshhost.RemotePid(rs)
	rs.(hub.SessionDetacher).Detach()
	is.True(ended(t, rs))
	is.True(waitGone(t, pid)) // no Hub came back: it ended by itself
	is.True(!groupAlive(t, pid))
	_, err := r.host.Adopt(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()})
	is.Equal(hub.KindOf(err), hub.NotFound) // there is nothing to adopt
}

func TestAnAdoptedSessionKilledOnTheHostSaysSo(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, graceOf(time.Minute))
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()}
	rs, err := r.host.Start(testContext(t), spec)
	is.NoErr(err)
	pid := sshhost.RemotePid(rs)
	rs.(hub.SessionDetacher).Detach()
	a, err := r.newHost(t).Adopt(testContext(t), spec)
	is.NoErr(err) // adopted by another Host of the same machine
	is.NoErr(syscall.Kill(-pid, syscall.SIGKILL))
	is.True(ended(t, a)) // its end is noticed
	why, ok := a.(hub.EndReporter)
	is.True(ok)
	is.Equal(why.EndReason(), "The session on build1 was killed.") // and explained
}

func TestAStartAfterALongPartitionAdoptsTheSessionThatRanOn(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, func(o *sshhost.Options) {
		keepAlive(1, 2)(o) // noticed within about 3 s
		o.DetachGrace = time.Minute
	})
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()}
	rs, err := r.host.Start(testContext(t), spec)
	is.NoErr(err)
	pid := sshhost.RemotePid(rs)
	is.True(r.srv.Signal(syscall.SIGSTOP) > 0) // the host stops answering
	is.True(ended(t, rs))                      // long enough for the Hub to end the session
	is.Equal(rs.(hub.EndReporter).EndReason(), "The connection to build1 was lost for longer than the Hub waits, so its session ended.")
	is.True(r.srv.Signal(syscall.SIGCONT) > 0) // the host is back

	again, err := r.host.Start(testContext(t), spec)
	is.NoErr(err)                           // a start
	is.Equal(sshhost.RemotePid(again), pid) // finds the session that ran on, and adopts it
	is.NoErr(factsOf(t, again))             // which answers
	is.NoErr(again.Stop(testContext(t)))    // and stops
	is.True(waitGone(t, pid) && !groupAlive(t, pid))
}

func TestAStartEndsASessionLeftRunningItDoesNotAdopt(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, graceOf(time.Minute))
	spec, pid := r.letGo(t, "alpha")

	other := r.newHost(t) // a Hub that knows nothing of it, and starts the workspace
	rs, err := other.Start(testContext(t), spec)
	is.NoErr(err)
	is.True(sshhost.RemotePid(rs) != pid) // a new session
	is.True(waitGone(t, pid))             // the one left running is ended first
	is.NoErr(factsOf(t, rs))              // the new one answers: the old one's clean-up took nothing of it
	_, remote, pidFile := sshhost.Sockets(rs)
	names := entries(t, filepath.Join(r.root, "run"))
	is.Equal(len(names), 3) // its socket, pid file and credentials folder
	is.True(strings.HasSuffix(remote, names[1]) || strings.HasSuffix(pidFile, names[1]))
	is.NoErr(rs.Stop(testContext(t)))
	is.Equal(entries(t, filepath.Join(r.root, "run")), nil) // and a stop leaves nothing
}

// A session of another build of Wharf (a Hub upgraded while its session
// ran on) is never adopted: the next Hub cannot trust what it speaks. It
// is reaped instead, and the workspace started afresh by the core.
func TestASessionOfAnotherBuildIsReapedNotAdopted(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	r := newRig(t, graceOf(time.Minute))
	spec, pid := r.letGo(t, "alpha")

	// Another build: the same program with other bytes, so another hash.
	self, err := os.Executable()
	is.NoErr(err)
	b, err := os.ReadFile(self)
	is.NoErr(err)
	r.opts.Binary = filepath.Join(shortDir(t), "wharf")
	is.NoErr(os.WriteFile(r.opts.Binary, append(b, "another build"...), 0o700))
	upgraded := r.newHost(t)
	_, err = upgraded.Adopt(testContext(t), spec)
	is.Equal(hub.KindOf(err), hub.NotFound) // not adopted
	is.True(groupAlive(t, pid))             // and left running until reaped
	reaped, err := upgraded.Reap(testContext(t))
	is.NoErr(err)
	is.Equal(len(reaped), 1)  // reaped
	is.True(waitGone(t, pid)) // ended there
}

// letGo starts a session of workspace id on the rig's host and lets it
// go, running on unheld, as a Hub that stopped leaves it; it returns the
// session's spec and its pid there.
func (r *rig) letGo(t *testing.T, id string) (hub.WorkspaceSessionSpec, int) {
	t.Helper()
	spec := hub.WorkspaceSessionSpec{WorkspaceID: id, Path: t.TempDir()}
	rs, err := r.host.Start(testContext(t), spec)
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	pid := sshhost.RemotePid(rs)
	rs.(hub.SessionDetacher).Detach()
	return spec, pid
}
