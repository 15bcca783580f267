package service_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// idlePeriod is the idle stop of the tests' Hubs: the shortest there is,
// so a held credential use (ApprovalWait) outlasts it.
const idlePeriod = service.MinIdleStop

// lockedBuffer is a log sink the Hub's goroutines may write concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newIdleEnv is a liveEnv whose Hub stops sessions idle for idlePeriod,
// and logs into the buffer returned.
func newIdleEnv(t *testing.T) (*liveEnv, *lockedBuffer) {
	t.Helper()
	logs := new(lockedBuffer)
	e := newLiveEnvWith(t, service.Config{IdleStop: idlePeriod, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return e, logs
}

// startQuiet starts app and waits until the Hub has heard its activity.
func (e *liveEnv) startQuiet() {
	e.t.Helper()
	e.startApp()
	synctest.Wait()
}

// advance moves the clock by d and lets what it set off settle.
func (e *liveEnv) advance(d time.Duration) {
	e.clock.Advance(d)
	synctest.Wait()
}

func TestAQuietSessionIsStoppedAfterExactlyTheIdlePeriodLikeAnyStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, logs := newIdleEnv(t)
		lib := e.register(e.repo("/home/ann/lib"))
		// A stream on another workspace sees app's activity without
		// following app.
		s, err := e.OpenLive(e.ctx, e.sess, lib, true, nil)
		is.NoErr(err)
		turns := &envReader{turns: reader(t.Context(), s)}
		is.Equal(activity(t, turns, e.app), "----") // stopped at open
		is.Equal(activity(t, turns, lib), "----")

		e.startQuiet()
		is.Equal(activity(t, turns, e.app), "r---") // running
		e.advance(idlePeriod - time.Nanosecond)
		is.True(e.Running(e.app))         // not a tick before the period
		is.True(e.backend.Running(e.app)) // the child runs
		is.True(turns.silent())           // and nothing was said
		e.advance(time.Nanosecond)
		is.True(!e.Running(e.app))                  // stopped at the period
		is.True(!e.backend.Running(e.app))          // the child too
		is.Equal(activity(t, turns, e.app), "----") // the activity topic says so
		is.True(!e.stateOf(e.app).Running)          // and the Hub state
		is.True(!e.autoStarts(e.app))               // marked not to start again, as a user's stop
		line := logLine(logs.String(), "stopped an idle workspace session")
		is.True(strings.Contains(line, "level=INFO"))       // logged at info
		is.True(strings.Contains(line, "workspace="+e.app)) // naming the workspace
		is.True(strings.Contains(line, "idle=1m0s"))        // and the period

		e.restart()
		is.True(!e.Running(e.app))               // the next Hub does not start it
		is.Equal(e.backend.StartCount(e.app), 0) // nor asks the backend
	})
}

// autoStarts reports whether id is marked to start with the next Hub.
func (e *env) autoStarts(id string) bool {
	e.t.Helper()
	for _, w := range e.workspaces() {
		if w.ID == id {
			return w.AutoStart
		}
	}
	e.t.Fatalf("%s is not registered", id)
	return false
}

// logLine returns the line of logs holding msg, or "".
func logLine(logs, msg string) string {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, msg) {
			return l
		}
	}
	return ""
}

func TestIdleStopIsOffByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startQuiet()
		e.advance(365 * 24 * time.Hour)
		is.True(e.Running(e.app)) // a year of quiet stops nothing
	})
}

func TestAnIdlePeriodShorterThanAMinuteIsRefused(t *testing.T) {
	for _, tc := range []struct {
		period time.Duration
		ok     bool
	}{
		{0, true},
		{-time.Minute, false},
		{time.Nanosecond, false},
		{service.MinIdleStop - time.Nanosecond, false},
		{service.MinIdleStop, true},
		{24 * time.Hour, true},
	} {
		t.Run(tc.period.String(), func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			_, err := service.New(service.Config{IdleStop: tc.period}, service.Ports{Store: e.store, Clock: e.clock,
				FS: e.fs, Git: e.git, Backend: e.backend, Vault: e.vault, Tools: e.tools, AgentLogins: fakes.NewAgentLogins(e.agent), Pusher: e.pusher})
			is.Equal(err == nil, tc.ok) // refused below a minute, 0 is off
		})
	}
}

// Whatever keeps a session busy keeps it running however long it lasts,
// and the period starts when it ends.
func TestWhatKeepsASessionBusyKeepsItRunningAndThePeriodStartsWhenItEnds(t *testing.T) {
	// busy makes app busy, and returns what ends it.
	for _, tc := range []struct {
		name    string
		prepare func(e *liveEnv) // before app starts
		busy    func(e *liveEnv) (end func())
	}{
		{name: "a live stream following its inventory", busy: func(e *liveEnv) func() {
			s := e.open(inventorySub(""))
			return s.Close
		}},
		{name: "a live stream following only the activity", busy: func(e *liveEnv) func() {
			s, err := e.OpenLive(e.ctx, e.sess, e.app, true, nil)
			if err != nil {
				e.t.Fatal(err)
			}
			return s.Close
		}},
		{name: "a request forwarded to it that lasts longer than the period", busy: func(e *liveEnv) func() {
			end, err := e.BeginForward(e.ctx, e.app)
			if err != nil {
				e.t.Fatal(err)
			}
			return end
		}},
		{name: "an agent turn", busy: func(e *liveEnv) func() {
			e.backend.SetActivity(e.app, true, false)
			return func() { e.backend.SetActivity(e.app, false, false) }
		}},
		{name: "a permission awaiting an answer", busy: func(e *liveEnv) func() {
			e.backend.SetActivity(e.app, false, true)
			return func() { e.backend.SetActivity(e.app, false, false) }
		}},
		{name: "a credential use held for approval",
			prepare: func(e *liveEnv) {
				tok := e.token("gh", "github.com", "ghp_idle", hub.CapHTTPSGit)
				_, err := e.AssignCredential(e.ctx, tok.ID, hub.AssignCredentialRequest{WorkspaceID: e.app,
					Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAskEveryTime})
				if err != nil {
					e.t.Fatal(err)
				}
			},
			busy: func(e *liveEnv) func() {
				broker := e.backend.Spec(e.app).Credentials.Broker
				done := make(chan error, 1)
				go func() { _, _, err := broker.Token(e.ctx, "github.com"); done <- err }()
				synctest.Wait()
				aps := e.CredentialApprovals(e.ctx)
				if len(aps) != 1 {
					e.t.Fatalf("%d uses held, want 1", len(aps))
				}
				return func() {
					if err := e.DecideCredentialApproval(e.ctx, e.ann, aps[0].ID, true); err != nil {
						e.t.Fatal(err)
					}
					if err := <-done; err != nil {
						e.t.Fatal(err)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				is := is.New(t)
				e, _ := newIdleEnv(t)
				if tc.prepare != nil {
					tc.prepare(e)
				}
				e.startQuiet()
				end := tc.busy(e)
				synctest.Wait()
				// Longer than the period, shorter than a held use waits.
				e.advance(idlePeriod + idlePeriod/2)
				is.True(e.Running(e.app)) // busy: kept
				end()
				synctest.Wait()
				e.advance(idlePeriod - time.Nanosecond)
				is.True(e.Running(e.app)) // the period started when it ended
				e.advance(time.Nanosecond)
				is.True(!e.Running(e.app)) // and stops it once over
			})
		})
	}
}

// A person acting on a running workspace through the Hub starts its
// period over.
func TestWhatAPersonDoesThroughTheHubStartsThePeriodOver(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(e *liveEnv) error
	}{
		{"a request forwarded to the session", func(e *liveEnv) error {
			end, err := e.BeginForward(e.ctx, e.app)
			if err == nil {
				end()
			}
			return err
		}},
		{"a change of the person's state in it", func(e *liveEnv) error {
			_, err := e.PatchPersonalState(e.ctx, e.sess, e.app, hub.PersonalStatePatch{DocumentPath: hub.Optional[string]{Set: true, Value: ptr("README.md")}})
			return err
		}},
		{"an acknowledgement of its activity", func(e *liveEnv) error { return e.AcknowledgeActivity(e.ctx, e.sess, e.app) }},
		{"a start of the running workspace", func(e *liveEnv) error { _, err := e.StartWorkspace(e.ctx, e.app); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				is := is.New(t)
				e, _ := newIdleEnv(t)
				e.startQuiet()
				e.advance(idlePeriod - time.Nanosecond)
				is.NoErr(tc.act(e)) // just before the period is over
				e.advance(time.Nanosecond)
				is.True(e.Running(e.app)) // kept
				e.advance(idlePeriod - 2*time.Nanosecond)
				is.True(e.Running(e.app)) // a tick before a whole period since
				e.advance(time.Nanosecond)
				is.True(!e.Running(e.app)) // stopped a period after the act
			})
		})
	}
}

func TestAPeriodOfQuietStartsOverWhenTheSessionWorksAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, _ := newIdleEnv(t)
		e.startQuiet()
		e.advance(idlePeriod / 2)
		e.backend.SetActivity(e.app, true, false) // a short turn
		synctest.Wait()
		e.backend.SetActivity(e.app, false, false)
		synctest.Wait()
		e.advance(idlePeriod - time.Nanosecond)
		is.True(e.Running(e.app)) // the quiet before the turn does not count
		e.advance(time.Nanosecond)
		is.True(!e.Running(e.app)) // a whole period after it
	})
}

func TestASessionStoppedAndStartedAgainGetsAFreshPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, _ := newIdleEnv(t)
		e.startQuiet()
		e.advance(idlePeriod / 2)
		_, err := e.StopWorkspace(e.ctx, e.app)
		is.NoErr(err)
		e.startQuiet()
		e.advance(idlePeriod / 2)
		is.True(e.Running(e.app)) // the first session's period is gone with it
		e.advance(idlePeriod/2 - time.Nanosecond)
		is.True(e.Running(e.app)) // a tick before the new one's
		e.advance(time.Nanosecond)
		is.True(!e.Running(e.app)) // stopped a period after its start
	})
}

func TestASessionThatStopsAnsweringIsNotTakenForIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, _ := newIdleEnv(t)
		e.startQuiet()
		e.backend.SetFeedOpener(e.app, hub.TopicActivity, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			return nil, hub.Errorf(hub.Unavailable, "child stuck")
		})
		e.feed(hub.TopicActivity, "", 1).End(hub.Errorf(hub.Unavailable, "hung up"))
		synctest.Wait()
		e.advance(3 * idlePeriod)
		is.True(e.Running(e.app)) // what the Hub cannot see is not stopped

		e.backend.SetFeedOpener(e.app, hub.TopicActivity, nil)
		e.advance(upstreamRetryMax) // it answers again, and is quiet
		is.True(e.Running(e.app))
		e.advance(idlePeriod)
		is.True(!e.Running(e.app)) // stopped within a period of answering
	})
}

// The timer only proposes: under the workspace's lock, whatever came
// first wins. Here the stop has fired and waits for the lock, which a
// lifecycle operation holds, while something else arrives.
func TestAnIdleStopWaitingForTheWorkspaceYieldsToWhatArrivedFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		// arrive acts while the stop waits; it may wait for the lock
		// itself, so it runs on its own goroutine.
		arrive func(e *liveEnv) error
	}{
		{"a live stream opening", func(e *liveEnv) error {
			_, err := e.OpenLive(e.ctx, e.sess, e.app, false, nil)
			return err
		}},
		{"a start", func(e *liveEnv) error {
			act, err := e.StartWorkspace(e.ctx, e.app)
			if err == nil && !act.Running {
				e.t.Error("the start answered not running")
			}
			return err
		}},
		{"a turn", func(e *liveEnv) error {
			e.backend.SetActivity(e.app, true, false)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				is := is.New(t)
				e, _ := newIdleEnv(t)
				e.startQuiet()
				unlock, err := service.LockWorkspace(e.ctx, e.Hub, e.app)
				is.NoErr(err)
				fired := make(chan struct{})
				go func() { e.clock.Advance(idlePeriod); close(fired) }()
				synctest.Wait()
				select {
				case <-fired:
					t.Fatal("the idle stop did not wait for the workspace's lock")
				default:
				}
				arrived := make(chan error, 1)
				go func() { arrived <- tc.arrive(e) }()
				synctest.Wait()
				unlock()
				synctest.Wait()
				<-fired
				is.NoErr(<-arrived)
				is.True(e.Running(e.app))         // it runs
				is.True(e.backend.Running(e.app)) // and so does its child
			})
		})
	}
}

func TestAWorkspaceStartedAgainAfterAnIdleStopGetsAFreshPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, _ := newIdleEnv(t)
		e.startQuiet()
		e.advance(idlePeriod) // stopped
		is.True(!e.Running(e.app))
		e.startQuiet()
		is.Equal(e.backend.StartCount(e.app), 2) // a new session
		e.advance(idlePeriod - time.Nanosecond)
		is.True(e.Running(e.app))
		e.advance(time.Nanosecond)
		is.True(!e.Running(e.app)) // stopped after its own period
	})
}

// A Hub that closes stops its sessions as a shutdown, not as idle ones:
// they start again with the next Hub.
func TestClosingTheHubIsNoIdleStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e, logs := newIdleEnv(t)
		e.startQuiet()
		e.advance(idlePeriod / 2)
		e.restart()
		is.True(e.Running(e.app))                                                 // started again by the next Hub
		is.Equal(logLine(logs.String(), "stopped an idle workspace session"), "") // no idle stop was logged
	})
}
