package service_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// envReader hands out a stream's envelopes one at a time, however the
// writer batched them.
type envReader struct {
	turns <-chan next
	buf   []live.Envelope
}

// activityOf opens an activity stream for caller.
func (e *liveEnv) activityOf(t *testing.T, caller hub.DeviceSession) *envReader {
	t.Helper()
	s, err := e.OpenLive(e.ctx, caller, e.app, true, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return &envReader{turns: reader(t.Context(), s)}
}

// silent reports that nothing is buffered nor waiting.
func (r *envReader) silent() bool { return len(r.buf) == 0 && silent(r.turns) }

// activity reads the next activity value of ws, as "running working
// awaiting finished" flags: "r---", "rw--", "----".
func activity(t *testing.T, r *envReader, ws string) string {
	t.Helper()
	if len(r.buf) == 0 {
		r.buf = take(t, r.turns, 1)
	}
	e := r.buf[0]
	r.buf = r.buf[1:]
	if e.Topic != hub.TopicActivity || e.Kind != hub.EventData || e.WS != ws || e.Keyed {
		t.Fatalf("not an activity data envelope of %s: %+v", ws, e)
	}
	var flags string
	for _, f := range []string{`"running":`, `"working":`, `"awaiting":`, `"finished":`} {
		d := string(e.Data)
		i := len(f) + strings.Index(d, f)
		if d[i] == 't' {
			flags += f[1:2]
		} else {
			flags += "-"
		}
	}
	return flags
}

func TestActivityFinishedFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		bob := e.user("bob")
		annTurns := e.activityOf(t, e.sess)
		bobTurns := e.activityOf(t, bob)
		is.Equal(activity(t, annTurns, e.app), "----") // one summary per workspace at open: stopped
		is.Equal(activity(t, bobTurns, e.app), "----") // for every user

		e.startApp()
		is.Equal(activity(t, annTurns, e.app), "r---") // running, nothing known yet
		is.Equal(activity(t, bobTurns, e.app), "r---") // for everyone
		synctest.Wait()
		is.True(annTurns.silent()) // the first quiet frame is no change and no finish

		e.backend.SetActivity(e.app, true, false)
		is.Equal(activity(t, annTurns, e.app), "rw--") // working
		e.backend.SetActivity(e.app, false, false)
		is.Equal(activity(t, annTurns, e.app), "r--f") // quiet after work: finished
		is.Equal(activity(t, bobTurns, e.app), "rw--") // bob saw the work
		is.Equal(activity(t, bobTurns, e.app), "r--f") // and the finish

		is.NoErr(e.AcknowledgeActivity(e.ctx, e.sess, e.app)) // ann views it
		is.Equal(activity(t, annTurns, e.app), "r---")        // cleared for ann
		is.True(bobTurns.silent())                            // not for bob
		is.NoErr(e.AcknowledgeActivity(e.ctx, e.sess, e.app)) // again
		is.True(annTurns.silent())                            // changes nothing

		e.backend.SetActivity(e.app, false, true)
		is.Equal(activity(t, bobTurns, e.app), "r-a-") // awaiting hides the finish
		e.backend.SetActivity(e.app, false, false)
		is.Equal(activity(t, bobTurns, e.app), "r--f") // and the answer shows again what bob has not seen
		is.Equal(activity(t, annTurns, e.app), "r-a-") // ann sees the question
		is.Equal(activity(t, annTurns, e.app), "r---") // and nothing she has not seen

		e.backend.SetActivity(e.app, true, true)
		is.Equal(activity(t, annTurns, e.app), "rwa-") // a turn asks a permission
		e.backend.SetActivity(e.app, false, false)
		is.Equal(activity(t, annTurns, e.app), "r--f") // and its end is a finish, though the last frame awaited
		is.NoErr(e.AcknowledgeActivity(e.ctx, e.sess, e.app))
		is.Equal(activity(t, annTurns, e.app), "r---") // ann views it
		is.Equal(activity(t, bobTurns, e.app), "rwa-") // bob saw the turn
		is.Equal(activity(t, bobTurns, e.app), "r--f") // and its finish

		e.backend.SetActivity(e.app, true, false)
		e.backend.SetActivity(e.app, false, false)
		is.Equal(activity(t, bobTurns, e.app), "rw--")
		is.Equal(activity(t, bobTurns, e.app), "r--f") // a later finish outranks ann's earlier view
		_, err := e.StopWorkspace(e.ctx, e.app)
		is.NoErr(err)
		is.Equal(activity(t, bobTurns, e.app), "----") // a stop: not running
		e.startApp()
		is.Equal(activity(t, bobTurns, e.app), "r---") // and the stop cleared the finish
	})
}

// finishWork starts app and has it work and go quiet, with no stream
// open: a finish nobody has seen.
func (e *liveEnv) finishWork() {
	e.startApp()
	synctest.Wait()
	e.backend.SetActivity(e.app, true, false)
	synctest.Wait()
	e.backend.SetActivity(e.app, false, false)
	synctest.Wait()
}

func TestActivityMarksSurviveARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.finishWork()

		turns := e.activityOf(t, e.sess)
		is.Equal(activity(t, turns, e.app), "r--f") // the first feed after sees it

		e.restart() // the app restarts with the Hub
		turns = e.activityOf(t, e.sess)
		is.Equal(activity(t, turns, e.app), "r--f") // the mark survived
	})
}

func TestAnUnreachableChildReadsNotRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.finishWork()
		turns := e.activityOf(t, e.sess)
		is.Equal(activity(t, turns, e.app), "r--f") // finished

		e.backend.SetFeedOpener(e.app, hub.TopicActivity, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			return nil, hub.Errorf(hub.Unavailable, "child stuck")
		})
		f := e.feed(hub.TopicActivity, "", 1)
		f.End(hub.Errorf(hub.Unavailable, "hung up"))
		is.Equal(activity(t, turns, e.app), "----") // a child that does not answer is not running

		e.backend.SetFeedOpener(e.app, hub.TopicActivity, nil)
		e.clock.Advance(2 * upstreamRetryMax)
		is.Equal(activity(t, turns, e.app), "r--f") // the recovery restores the kept mark
	})
}
