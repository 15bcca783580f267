//go:build linux

package sshhost_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// factsOf asks rs for its facts.
func factsOf(t *testing.T, rs hub.WorkspaceSession) error {
	_, err := rs.Facts(testContext(t))
	return err
}

func TestARestartedHubReapsTheSessionsItDoesNotKnow(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	old := r.start(t, "alpha") // a session of the Hub before its restart
	pid := sshhost.RemotePid(old)

	restarted := r.newHost(t)
	mine, err := restarted.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "beta", Path: t.TempDir()})
	is.NoErr(err)
	t.Cleanup(func() { mine.Stop(testContext(t)) })
	reaped, err := restarted.Reap(testContext(t))
	is.NoErr(err)
	is.Equal(len(reaped), 1) // the session it does not know
	is.True(waitGone(t, pid))
	is.True(!groupAlive(t, pid)) // is ended on the host
	select {
	case <-old.Done(): // and so, for the Hub that started it, ended
	case <-time.After(testTimeout):
		t.Fatal("the reaped session did not end")
	}
	is.NoErr(factsOf(t, mine)) // while the restarted Hub's own runs on
	names := entries(t, filepath.Join(r.root, "run"))
	is.Equal(len(names), 3) // its socket, pid file and folder are all that is left there

	again, err := restarted.Reap(testContext(t))
	is.NoErr(err)
	is.Equal(len(again), 0) // a second reap finds nothing
}
