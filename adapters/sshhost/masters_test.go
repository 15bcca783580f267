package sshhost_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// Twelve sessions at once, more than one connection carries (sshd's
// MaxSessions, 10 by default): they are spread over two masters, each
// one login, and no session falls back to a connection of its own.
func TestSessionsPastWhatOneConnectionCarriesGoOnAnotherMaster(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	is.NoErr(r.host.Check(testContext(t))) // the primary master
	const n = 12
	sessions := make([]hub.WorkspaceSession, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sessions[i], errs[i] = r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: fmt.Sprintf("w%02d", i), Path: t.TempDir()})
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range sessions {
			if s != nil {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				s.Stop(ctx)
				cancel()
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v\n%s", i, err, r.logs)
		}
	}
	for _, s := range sessions {
		_, err := s.Facts(testContext(t))
		is.NoErr(err) // every session answers through its forward
	}
	is.Equal(r.srv.Connections(), 2)                      // on two connections: the primary and one more master
	is.True(!strings.Contains(r.srv.String(), "refused")) // no channel was refused
	is.NoErr(sessions[0].Stop(testContext(t)))            // a session on the primary stops
	is.NoErr(sessions[n-1].Stop(testContext(t)))          // and one on the other master
	again, err := r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "w00", Path: t.TempDir()})
	is.NoErr(err) // a new one takes a freed place
	sessions[0] = again
	is.Equal(r.srv.Connections(), 2) // on the same connections
}
