package clone_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const target = "/srv/code/uatu"

// jobAt is a job moved to phase (start requested when withStart).
func jobAt(t *testing.T, phase hub.ClonePhase, withStart bool) *clone.Job {
	t.Helper()
	j := clone.NewJob(target, withStart, t0)
	for _, p := range []hub.ClonePhase{hub.PhaseRegistering, hub.PhaseStarting} {
		if j.Phase() == phase {
			break
		}
		if err := j.Advance(p); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

// TestAJobMovesThroughItsPhasesInOrder copies research §11.8's machine
// with the seed's difference (§1): starting only when start is asked.
func TestAJobMovesThroughItsPhasesInOrder(t *testing.T) {
	for _, tc := range []struct {
		row   string
		from  hub.ClonePhase
		start bool
		to    hub.ClonePhase
		legal bool
	}{
		{"cloning to registering", hub.PhaseCloning, false, hub.PhaseRegistering, true},
		{"registering to starting when start is asked", hub.PhaseRegistering, true, hub.PhaseStarting, true},
		{"registering to starting without start", hub.PhaseRegistering, false, hub.PhaseStarting, false},
		{"cloning to starting skips registering", hub.PhaseCloning, true, hub.PhaseStarting, false},
		{"cloning again", hub.PhaseCloning, false, hub.PhaseCloning, false},
		{"registering again", hub.PhaseRegistering, false, hub.PhaseRegistering, false},
		{"back to cloning", hub.PhaseRegistering, false, hub.PhaseCloning, false},
		{"past starting", hub.PhaseStarting, true, hub.PhaseRegistering, false},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			j := jobAt(t, tc.from, tc.start)
			err := j.Advance(tc.to)
			if tc.legal {
				is.NoErr(err)              // a legal move
				is.Equal(j.Phase(), tc.to) // is made
				return
			}
			is.Equal(hub.KindOf(err), hub.Internal) // an illegal move is the caller's bug
			is.Equal(j.Phase(), tc.from)            // and moves nothing
		})
	}
	t.Run("no move once stopping or finished", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		is.Equal(j.Cancel(), clone.CancelStop)                              // stopping
		is.Equal(hub.KindOf(j.Advance(hub.PhaseRegistering)), hub.Internal) // a stopping job does not move on
		_, err := j.Finish(hub.CloneResult{}, t0)
		is.NoErr(err)                                                       // settled
		is.Equal(hub.KindOf(j.Advance(hub.PhaseRegistering)), hub.Internal) // nor a finished one
	})
}

// TestAResultMustFitThePhaseItEnds copies research §11.8's results per
// phase and the seed's CloneResult variants.
func TestAResultMustFitThePhaseItEnds(t *testing.T) {
	failed := func(s hub.CloneStatus) hub.CloneResult {
		return hub.CloneResult{Status: s, Error: "git clone exited 128"}
	}
	ok := func(running bool) hub.CloneResult {
		return hub.CloneResult{Status: hub.CloneSucceeded, WorkspaceID: "ws1", Running: running}
	}
	for _, tc := range []struct {
		row     string
		phase   hub.ClonePhase
		start   bool
		outcome hub.CloneResult
		fits    bool
	}{
		{"clone-failed while cloning", hub.PhaseCloning, false, failed(hub.CloneFailed), true},
		{"clone-failed while registering", hub.PhaseRegistering, false, failed(hub.CloneFailed), false},
		{"clone-failed without an error", hub.PhaseCloning, false, hub.CloneResult{Status: hub.CloneFailed}, false},
		{"register-failed while registering", hub.PhaseRegistering, false, failed(hub.CloneRegisterFailed), true},
		{"register-failed while cloning", hub.PhaseCloning, false, failed(hub.CloneRegisterFailed), false},
		{"start-failed while starting", hub.PhaseStarting, true, failed(hub.CloneStartFailed), true},
		{"start-failed keeping the stopped workspace", hub.PhaseStarting, true, hub.CloneResult{Status: hub.CloneStartFailed, Error: "x", WorkspaceID: "ws1"}, true},
		{"start-failed while registering", hub.PhaseRegistering, true, failed(hub.CloneStartFailed), false},
		{"cleanup-failed while cloning", hub.PhaseCloning, false, failed(hub.CloneCleanupFailed), true},
		{"cleanup-failed while starting", hub.PhaseStarting, true, failed(hub.CloneCleanupFailed), true},
		{"succeeded stopped after registering", hub.PhaseRegistering, false, ok(false), true},
		{"succeeded running after starting", hub.PhaseStarting, true, ok(true), true},
		{"succeeded after registering when start was asked", hub.PhaseRegistering, true, ok(false), false},
		{"succeeded while cloning", hub.PhaseCloning, false, ok(false), false},
		{"succeeded running without a start", hub.PhaseRegistering, false, ok(true), false},
		{"succeeded not running after starting", hub.PhaseStarting, true, ok(false), false},
		{"succeeded without a workspace", hub.PhaseRegistering, false, hub.CloneResult{Status: hub.CloneSucceeded}, false},
		{"cancelled is never an outcome", hub.PhaseCloning, false, hub.CloneResult{Status: hub.CloneCancelled}, false},
		{"timed-out is never an outcome", hub.PhaseCloning, false, hub.CloneResult{Status: hub.CloneTimedOut, Reason: "lifetime"}, false},
		{"the zero outcome without a stop", hub.PhaseCloning, false, hub.CloneResult{}, false},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			j := jobAt(t, tc.phase, tc.start)
			res, err := j.Finish(tc.outcome, t0)
			_, has := j.Result()
			if !tc.fits {
				is.Equal(hub.KindOf(err), hub.Internal) // refused as the caller's bug
				is.True(!has)                           // and the job has no result
				return
			}
			is.NoErr(err) // settled
			want := tc.outcome
			want.Target = target
			is.Equal(res, want) // with the job's target
			got, _ := j.Result()
			is.Equal(got, want) // which the job keeps
		})
	}
}

func TestAResultIsFinal(t *testing.T) {
	is := is.New(t)
	j := jobAt(t, hub.PhaseCloning, false)
	_, err := j.Finish(hub.CloneResult{Status: hub.CloneFailed, Error: "git clone exited 128"}, t0)
	is.NoErr(err) // the first result
	_, err = j.Finish(hub.CloneResult{Status: hub.CloneCleanupFailed, Error: "x"}, t0)
	is.Equal(hub.KindOf(err), hub.Internal) // a second is refused
	res, _ := j.Result()
	is.Equal(res.Status, hub.CloneFailed)          // and the first stands
	is.Equal(j.Cancel(), clone.CancelDone)         // a cancel then answers terminal
	is.True(!j.Expire(t0.Add(2 * clone.Lifetime))) // and no time-out stops it again
	is.True(j.Deadline().IsZero())                 // nor is one due
}

// TestAStopWinsOverWhatTheStoppedWorkReports copies §11.6 and §11.8: a
// cancel (or a time-out) wins over a concurrent failure or success, and
// only a failed rollback wins over the stop.
func TestAStopWinsOverWhatTheStoppedWorkReports(t *testing.T) {
	for _, tc := range []struct {
		row     string
		phase   hub.ClonePhase
		expire  bool // a time-out stopped it, else a cancel
		outcome hub.CloneResult
		want    hub.CloneResult
	}{
		{"cancelled while cloning, the kill reported", hub.PhaseCloning, false, hub.CloneResult{},
			hub.CloneResult{Status: hub.CloneCancelled, Target: target}},
		{"cancelled while cloning, git's failure reported", hub.PhaseCloning, false, hub.CloneResult{Status: hub.CloneFailed, Error: "git clone exited 143"},
			hub.CloneResult{Status: hub.CloneCancelled, Target: target}},
		{"cancelled while registering, the registration rolled back", hub.PhaseRegistering, false, hub.CloneResult{Status: hub.CloneSucceeded, WorkspaceID: "ws1"},
			hub.CloneResult{Status: hub.CloneCancelled, Target: target}},
		{"cancelled while starting, the rollback failed", hub.PhaseStarting, false, hub.CloneResult{Status: hub.CloneCleanupFailed, Error: "clone cancellation could not remove the workspace registration: disk full"},
			hub.CloneResult{Status: hub.CloneCleanupFailed, Target: target, Error: "clone cancellation could not remove the workspace registration: disk full"}},
		{"timed out while cloning", hub.PhaseCloning, true, hub.CloneResult{Status: hub.CloneFailed, Error: "git clone exited 143"},
			hub.CloneResult{Status: hub.CloneTimedOut, Target: target, Reason: hub.CloneReasonLifetime}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			j := jobAt(t, tc.phase, tc.phase == hub.PhaseStarting)
			if tc.expire {
				is.True(j.Expire(t0.Add(clone.Lifetime))) // the lifetime stops it
			} else {
				is.Equal(j.Cancel(), clone.CancelStop) // the first cancel stops it
			}
			is.True(j.Stopping())                  // stopping
			is.Equal(j.Cancel(), clone.CancelWait) // a repeat waits for the same end
			res, err := j.Finish(tc.outcome, t0)
			is.NoErr(err)          // settled
			is.Equal(res, tc.want) // as the stop says
			answer, err := clone.CancelAnswer(res)
			if res.Status == hub.CloneCleanupFailed {
				is.Equal(err, clone.ErrCleanupFailed) // a failed rollback answers 500
			} else {
				is.NoErr(err)                           // a clean stop
				is.Equal(answer, clone.CancelCancelled) // answers cancelled
			}
			is.Equal(j.Cancel(), clone.CancelDone) // and a later cancel answers terminal
		})
	}
}

// TestTheTimeOutsFollowTheClock copies §11.7 and §12: inactivity is
// reset by output and by input and runs only while cloning; the lifetime
// fires even while output keeps flowing.
func TestTheTimeOutsFollowTheClock(t *testing.T) {
	t.Run("inactivity after 10 minutes of silence", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		is.Equal(j.Deadline(), t0.Add(clone.Inactivity))           // due at 10 min
		is.True(!j.Expire(t0.Add(clone.Inactivity - time.Second))) // not before
		is.True(j.Expire(t0.Add(clone.Inactivity)))                // then it stops the job
		res, err := j.Finish(hub.CloneResult{}, t0.Add(clone.Inactivity))
		is.NoErr(err)                                                                                                // settled
		is.Equal(res, hub.CloneResult{Status: hub.CloneTimedOut, Target: target, Reason: hub.CloneReasonInactivity}) // timed out for inactivity
	})
	t.Run("output resets inactivity", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		j.Touch(t0.Add(9 * time.Minute))
		is.True(!j.Expire(t0.Add(clone.Inactivity)))                   // output at 9 min keeps it alive at 10
		is.Equal(j.Deadline(), t0.Add(9*time.Minute+clone.Inactivity)) // until 19
		is.True(j.Expire(t0.Add(9*time.Minute + clone.Inactivity)))    // then it ends
	})
	t.Run("input resets inactivity", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		is.NoErr(j.AcceptInput("yes", t0.Add(9*time.Minute))) // an answer at 9 min
		is.True(!j.Expire(t0.Add(clone.Inactivity)))          // keeps it alive at 10
	})
	t.Run("an earlier time does not move activity back", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		j.Touch(t0.Add(5 * time.Minute))
		j.Touch(t0.Add(time.Minute))
		is.Equal(j.Deadline(), t0.Add(5*time.Minute+clone.Inactivity)) // the latest activity counts
	})
	t.Run("no inactivity while registering", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseRegistering, false)
		is.Equal(j.Deadline(), t0.Add(clone.Lifetime)) // only the lifetime is due
		is.True(!j.Expire(t0.Add(30 * time.Minute)))   // a slow registration is not inactivity
	})
	t.Run("the lifetime fires while output flows", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		for m := time.Duration(1); m < 60; m++ {
			j.Touch(t0.Add(m * time.Minute))
			is.True(!j.Expire(t0.Add(m * time.Minute))) // alive while within the lifetime
		}
		is.Equal(j.Deadline(), t0.Add(clone.Lifetime)) // the lifetime is due first
		is.True(j.Expire(t0.Add(clone.Lifetime)))      // and ends it
		res, _ := j.Finish(hub.CloneResult{}, t0.Add(clone.Lifetime))
		is.Equal(res.Reason, hub.CloneReasonLifetime) // for its lifetime
	})
	t.Run("a stopping job does not time out again", func(t *testing.T) {
		is := is.New(t)
		j := jobAt(t, hub.PhaseCloning, false)
		is.Equal(j.Cancel(), clone.CancelStop)
		is.True(!j.Expire(t0.Add(clone.Lifetime))) // the cancel stands
	})
}

// TestInputIsTakenOnlyWhileCloning copies §11.5's order of checks.
func TestInputIsTakenOnlyWhileCloning(t *testing.T) {
	big := strings.Repeat("x", clone.MaxInputBytes+1)
	for _, tc := range []struct {
		row   string
		job   func(t *testing.T) *clone.Job
		input string
		want  error
	}{
		{"an answer while cloning", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseCloning, false) }, "yes", nil},
		{"Enter", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseCloning, false) }, "", nil},
		{"8192 bytes", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseCloning, false) }, big[1:], nil},
		{"8193 bytes", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseCloning, false) }, big, clone.ErrInputTooLarge},
		{"while registering", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseRegistering, false) }, "yes", clone.ErrNoInput},
		{"while stopping", func(t *testing.T) *clone.Job {
			j := jobAt(t, hub.PhaseCloning, false)
			j.Cancel()
			return j
		}, "yes", clone.ErrNoInput},
		{"after the result", func(t *testing.T) *clone.Job {
			j := jobAt(t, hub.PhaseCloning, false)
			_, _ = j.Finish(hub.CloneResult{Status: hub.CloneFailed, Error: "x"}, t0)
			return j
		}, "yes", clone.ErrNoInput},
		{"409 before 413", func(t *testing.T) *clone.Job { return jobAt(t, hub.PhaseRegistering, false) }, big, clone.ErrNoInput},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			is.Equal(tc.job(t).AcceptInput(tc.input, t0), tc.want) // the answer
		})
	}
	is := is.New(t)
	is.Equal(hub.KindOf(clone.ErrNoInput), hub.Conflict)       // 409
	is.Equal(hub.KindOf(clone.ErrInputTooLarge), hub.TooLarge) // 413
	is.Equal(hub.KindOf(clone.ErrNotFound), hub.NotFound)      // 404
}

func TestAFinishedJobIsRetainedForFiveMinutes(t *testing.T) {
	is := is.New(t)
	j := jobAt(t, hub.PhaseCloning, false)
	is.True(j.Retained(t0.Add(59 * time.Minute))) // a running job is retained
	end := t0.Add(time.Minute)
	_, err := j.Finish(hub.CloneResult{Status: hub.CloneFailed, Error: "x"}, end)
	is.NoErr(err)
	is.True(j.Retained(end.Add(clone.Retention - time.Nanosecond))) // until 5 minutes after its result
	is.True(!j.Retained(end.Add(clone.Retention)))                  // then gone
}
