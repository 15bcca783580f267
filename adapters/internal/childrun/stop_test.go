package childrun_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// slowProcess ignores Terminate and, once killed, ends only after end
// has passed: a child on another machine, whose kill and clean-up are
// round trips.
type slowProcess struct {
	s   *childrun.Session
	end time.Duration
}

func (p *slowProcess) Terminate() {}

func (p *slowProcess) Kill() {
	time.AfterFunc(p.end, func() { p.s.Finish("killed", nil) })
}

func TestStopWaitsForTheEndOfAKillForItsKillWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		killWait time.Duration
		confirms bool
	}{
		{"without a kill wait the end is unconfirmed after the grace", 0, false},
		{"a kill wait longer than the kill's round trip confirms the end", time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			p := &slowProcess{end: 200 * time.Millisecond}
			p.s = childrun.New(childrun.Config{
				WorkspaceID: "w", Socket: t.TempDir() + "/s", Process: p, Terminate: "nothing",
				StopGrace: time.Millisecond, KillWait: tc.killWait,
			})
			err := p.s.Stop(testContext(t))
			if tc.confirms {
				is.NoErr(err) // the end is confirmed once the kill lands
				return
			}
			is.True(err != nil)                     // the end is not confirmed
			is.Equal(hub.KindOf(err), hub.Internal) // an internal failure
			<-p.s.Done()                            // and the kill still lands
		})
	}
}
