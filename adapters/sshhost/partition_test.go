//go:build linux

package sshhost_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// keepAlive shortens the master's keep-alive (the default, 15 s × 3,
// notices a partition within 45 s) so a test sees one noticed quickly.
func keepAlive(interval, count int) func(*sshhost.Options) {
	return func(o *sshhost.Options) {
		o.SSH = append(o.SSH, "-o", "ServerAliveInterval="+strconv.Itoa(interval), "-o", "ServerAliveCountMax="+strconv.Itoa(count))
	}
}

// factsWithin asks rs for its facts within d.
func factsWithin(rs hub.WorkspaceSession, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := rs.Facts(ctx)
	return err
}

func TestAShortPartitionLeavesTheSessionRunning(t *testing.T) {
	is := is.New(t)
	r := newRig(t, keepAlive(5, 3)) // noticed after 15 s at the earliest
	rs := r.start(t, "alpha")
	is.True(r.srv.Signal(syscall.SIGSTOP) > 0) // the host stops answering
	err := factsWithin(rs, 300*time.Millisecond)
	is.Equal(hub.KindOf(err), hub.Unavailable) // meanwhile the session is unavailable
	is.True(r.srv.Signal(syscall.SIGCONT) > 0) // the partition heals
	is.NoErr(factsWithin(rs, testTimeout))     // and the session answers again
	select {
	case <-rs.Done():
		t.Fatal("the session ended")
	default: // still running
	}
}

func TestALongPartitionEndsTheSessionWithAReasonAndLeavesNothing(t *testing.T) {
	is := is.New(t)
	r := newRig(t, keepAlive(1, 2)) // noticed within about 3 s
	rs := r.start(t, "alpha")
	pid := sshhost.RemotePid(rs)
	began := time.Now()
	is.True(r.srv.Signal(syscall.SIGSTOP) > 0)                                   // the host stops answering
	is.Equal(hub.KindOf(factsWithin(rs, 300*time.Millisecond)), hub.Unavailable) // unavailable at once
	select {
	case <-rs.Done():
	case <-time.After(testTimeout):
		t.Fatal("the partition was never noticed")
	}
	noticed := time.Since(began)
	is.True(noticed < 10*time.Second)                                                 // noticed within the keep-alive's bound (and slack)
	is.True(strings.Contains(r.logs.String(), "the connection to the host was lost")) // the reason is logged
	why, ok := rs.(hub.EndReporter)
	is.True(ok)                                                                                                         // it can say why it ended
	is.Equal(why.EndReason(), "The connection to build1 was lost for longer than the Hub waits, so its session ended.") // in the user's terms
	_, err := rs.Dial(testContext(t))
	is.Equal(hub.KindOf(err), hub.Unavailable) // the ended session is unavailable

	is.True(r.srv.Signal(syscall.SIGCONT) > 0) // once the host answers again
	is.True(waitGone(t, pid))                  // its sshd sees the connection gone, and the child its input's end
	is.True(!groupAlive(t, pid))               // nothing of the session runs there
	t.Logf("partition noticed after %v", noticed)
}
