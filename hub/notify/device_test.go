package notify_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// A device's coverage and cutoffs (research §7.3): which workspaces and
// categories it receives, and since when.

var (
	login   = hub.DeviceSessionDigest{1}
	relogin = hub.DeviceSessionDigest{2}
)

// cut is a cutoff.
func cut(ws string, c hub.NotificationCategory, since time.Time) hub.PushCutoff {
	return hub.PushCutoff{WorkspaceID: ws, Category: c, Since: since}
}

// enrollment is an enrollment's preferences.
func enrollment(ids []string, all, needsAnswer, completed bool) notify.Enrollment {
	return notify.Enrollment{WorkspaceIDs: ids, AllWorkspaces: all, NeedsAnswer: needsAnswer, Completed: completed}
}

func TestCoveredIsTheSelectionOrEveryRegisteredWorkspaceInRegistrationOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		device     hub.PushDevice
		registered []string
		want       []string
	}{
		{"a selection, in registration order", hub.PushDevice{WorkspaceIDs: []string{"ws-c", "ws-a"}}, []string{"ws-a", "ws-b", "ws-c"}, []string{"ws-a", "ws-c"}},
		{"a selection without the workspaces that left", hub.PushDevice{WorkspaceIDs: []string{"ws-a", "ws-gone"}}, []string{"ws-a", "ws-b"}, []string{"ws-a"}},
		{"an empty selection", hub.PushDevice{WorkspaceIDs: []string{}}, []string{"ws-a"}, nil},
		{"allWorkspaces, every registered one", hub.PushDevice{AllWorkspaces: true, WorkspaceIDs: []string{"ws-a"}}, []string{"ws-a", "ws-b"}, []string{"ws-a", "ws-b"}},
		{"allWorkspaces, one registered later included", hub.PushDevice{AllWorkspaces: true}, []string{"ws-a", "ws-b", "ws-later"}, []string{"ws-a", "ws-b", "ws-later"}},
		{"allWorkspaces with nothing registered", hub.PushDevice{AllWorkspaces: true, WorkspaceIDs: []string{"ws-a"}}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got := notify.Covered(tc.device, tc.registered)
			is.Equal(len(got), len(tc.want)) // as many workspaces
			for i := range got {
				is.Equal(got[i], tc.want[i]) // the same, in order
			}
		})
	}
}

func TestCoveredWithAllWorkspacesDoesNotShareTheRegistry(t *testing.T) {
	is := is.New(t)
	registry := []string{"ws-a", "ws-b"}
	got := notify.Covered(hub.PushDevice{AllWorkspaces: true}, registry)
	got[0] = "changed"
	is.Equal(registry[0], "ws-a") // the caller's registry is untouched
}

func TestANewDeviceStartsEveryCoveredWorkspaceAndEnabledCategoryNow(t *testing.T) {
	is := is.New(t)
	d := notify.Enroll(nil, enrollment([]string{"ws-b", "ws-a"}, false, true, true), "dev", "ada", login, []string{"ws-a", "ws-b", "ws-c"}, t0)
	is.Equal(d.ID, "dev")                                     // the id given
	is.Equal(d.User, "ada")                                   // the user
	is.Equal(d.DeviceSession, login)                          // under the login
	is.Equal(d.CreatedAt, t0)                                 // created now
	is.Equal(d.WorkspaceIDs, []string{"ws-b", "ws-a"})        // the selection as sent
	is.True(d.NeedsAnswer && d.Completed && !d.AllWorkspaces) // the preferences
	is.Equal(d.Cutoffs, []hub.PushCutoff{
		cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-a", hub.CategoryCompleted, t0),
		cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryCompleted, t0),
	}) // a cutoff now per covered workspace and enabled category, none for ws-c
}

func TestADisabledCategoryHasNoCutoff(t *testing.T) {
	is := is.New(t)
	d := notify.Enroll(nil, enrollment([]string{"ws-a"}, false, false, true), "dev", "ada", login, []string{"ws-a"}, t0)
	is.Equal(d.Cutoffs, []hub.PushCutoff{cut("ws-a", hub.CategoryCompleted, t0)}) // completed only
	d = notify.Enroll(nil, enrollment([]string{"ws-a"}, true, false, false), "dev", "ada", login, []string{"ws-a"}, t0)
	is.Equal(len(d.Cutoffs), 0) // no category, no cutoff
}

func TestTheSelectionIsStoredWhileAllWorkspacesIsOnAndRestoredWhenItIsOff(t *testing.T) {
	is := is.New(t)
	reg := []string{"ws-a", "ws-b", "ws-c"}
	on := notify.Enroll(nil, enrollment([]string{"ws-b"}, true, true, false), "dev", "ada", login, reg, t0)
	is.Equal(on.WorkspaceIDs, []string{"ws-b"}) // the selection kept
	is.Equal(notify.Covered(on, reg), reg)      // while every workspace is covered
	off := notify.Enroll(&on, enrollment(on.WorkspaceIDs, false, true, false), "dev", "ada", login, reg, t0.Add(time.Hour))
	is.Equal(notify.Covered(off, reg), []string{"ws-b"})                              // turning it off restores the selection
	is.Equal(off.Cutoffs, []hub.PushCutoff{cut("ws-b", hub.CategoryNeedsAnswer, t0)}) // still covered since t0
}

// TestReenrollingKeepsACutoffOnlyUnderTheSameLoginForACategoryAndWorkspaceStillCovered
// copies research §7.3's cutoff rule row by row: a cutoff is kept only
// under the same login session, while the category stays enabled and the
// workspace stays covered; otherwise it is now.
func TestReenrollingKeepsACutoffOnlyUnderTheSameLoginForACategoryAndWorkspaceStillCovered(t *testing.T) {
	reg := []string{"ws-a", "ws-b", "ws-c"}
	t1 := t0.Add(time.Hour)
	old := hub.PushDevice{ID: "dev", User: "ada", DeviceSession: login, WorkspaceIDs: []string{"ws-a", "ws-b"},
		NeedsAnswer: true, Completed: false, CreatedAt: t0.Add(-time.Hour), LastSentAt: t0.Add(-time.Minute), LastAckAt: t0,
		Cutoffs: []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0)}}
	all := old
	all.AllWorkspaces = true
	all.Cutoffs = append([]hub.PushCutoff{}, old.Cutoffs...)
	all.Cutoffs = append(all.Cutoffs, cut("ws-c", hub.CategoryNeedsAnswer, t0.Add(time.Minute)))
	unstamped := all
	stale := old // a completed cutoff left from before completed was disabled
	stale.Cutoffs = append(append([]hub.PushCutoff{}, old.Cutoffs...), cut("ws-a", hub.CategoryCompleted, t0.Add(-time.Hour)))
	unstamped.Cutoffs = old.Cutoffs // ws-c registered after the enrollment, not yet stamped
	for _, tc := range []struct {
		name    string
		old     hub.PushDevice
		e       notify.Enrollment
		session hub.DeviceSessionDigest
		want    []hub.PushCutoff
	}{
		{"the same preferences under the same login", old, enrollment([]string{"ws-a", "ws-b"}, false, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0)}},
		{"the same preferences under another login", old, enrollment([]string{"ws-a", "ws-b"}, false, true, false), relogin,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t1), cut("ws-b", hub.CategoryNeedsAnswer, t1)}},
		{"a workspace added to the selection", old, enrollment([]string{"ws-a", "ws-b", "ws-c"}, false, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-c", hub.CategoryNeedsAnswer, t1)}},
		{"a workspace dropped from the selection", old, enrollment([]string{"ws-b"}, false, true, false), login,
			[]hub.PushCutoff{cut("ws-b", hub.CategoryNeedsAnswer, t0)}},
		{"a category enabled", old, enrollment([]string{"ws-a", "ws-b"}, false, true, true), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-a", hub.CategoryCompleted, t1),
				cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryCompleted, t1)}},
		{"a category enabled over a stale cutoff of it", stale, enrollment([]string{"ws-a"}, false, true, true), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-a", hub.CategoryCompleted, t1)}},
		{"a category disabled", old, enrollment([]string{"ws-a", "ws-b"}, false, false, true), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryCompleted, t1), cut("ws-b", hub.CategoryCompleted, t1)}},
		{"allWorkspaces turned on", old, enrollment([]string{"ws-a", "ws-b"}, true, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-c", hub.CategoryNeedsAnswer, t1)}},
		{"allWorkspaces turned off, the selection kept", all, enrollment([]string{"ws-a"}, false, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0)}},
		{"allWorkspaces kept, a later workspace's stamp kept", all, enrollment(nil, true, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-c", hub.CategoryNeedsAnswer, t0.Add(time.Minute))}},
		{"allWorkspaces kept, a later workspace not yet stamped starts now", unstamped, enrollment(nil, true, true, false), login,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-c", hub.CategoryNeedsAnswer, t1)}},
		{"allWorkspaces kept under another login", all, enrollment(nil, true, true, false), relogin,
			[]hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t1), cut("ws-b", hub.CategoryNeedsAnswer, t1), cut("ws-c", hub.CategoryNeedsAnswer, t1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d := notify.Enroll(&tc.old, tc.e, "dev", "ada", tc.session, reg, t1)
			is.Equal(d.Cutoffs, tc.want)              // the cutoffs of the rule
			is.Equal(d.DeviceSession, tc.session)     // now under the enrolling login
			is.Equal(d.CreatedAt, tc.old.CreatedAt)   // still created when it first was
			is.Equal(d.LastSentAt, tc.old.LastSentAt) // with its last send
			is.Equal(d.LastAckAt, tc.old.LastAckAt)   // and its last acknowledgement
		})
	}
}

func TestAReenabledCategoryStartsAgainFromItsReenabling(t *testing.T) {
	is := is.New(t)
	reg := []string{"ws-a"}
	d := notify.Enroll(nil, enrollment(reg, false, true, false), "dev", "ada", login, reg, t0)
	d = notify.Enroll(&d, enrollment(reg, false, false, false), "dev", "ada", login, reg, t0.Add(time.Minute))
	d = notify.Enroll(&d, enrollment(reg, false, true, false), "dev", "ada", login, reg, t0.Add(2*time.Minute))
	is.Equal(d.Cutoffs, []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0.Add(2*time.Minute))}) // what happened while it was off is history
	n := note(hub.NotifyQuestionPending, t0.Add(90*time.Second))
	is.True(!notify.Eligible(d, "ws-a", reg, n)) // so an occurrence from then is not sent
}

// TestEligibleCopiesTheCutoffRule: a device receives an occurrence of an
// enabled category, in a workspace it covers, created at or after its
// cutoff.
func TestEligibleCopiesTheCutoffRule(t *testing.T) {
	reg := []string{"ws-a", "ws-b"}
	d := hub.PushDevice{WorkspaceIDs: []string{"ws-a"}, NeedsAnswer: true, Completed: true,
		Cutoffs: []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-a", hub.CategoryCompleted, t0.Add(time.Hour))}}
	onlyCompleted := d
	onlyCompleted.NeedsAnswer = false // its stale needsAnswer cutoff does not count
	stale := d
	stale.Cutoffs = append(stale.Cutoffs, cut("ws-b", hub.CategoryNeedsAnswer, t0)) // ws-b is not selected
	for _, tc := range []struct {
		name   string
		device hub.PushDevice
		ws     string
		reg    []string
		n      hub.Notification
		want   bool
	}{
		{"a question before the cutoff", d, "ws-a", reg, note(hub.NotifyQuestionPending, t0.Add(-time.Nanosecond)), false},
		{"a question at the cutoff", d, "ws-a", reg, note(hub.NotifyQuestionPending, t0), true},
		{"a question after the cutoff", d, "ws-a", reg, note(hub.NotifyQuestionPending, t0.Add(time.Second)), true},
		{"a permission after the cutoff", d, "ws-a", reg, note(hub.NotifyPermissionPending, t0.Add(time.Second)), true},
		{"a turn before its own category's cutoff", d, "ws-a", reg, note(hub.NotifyTurnCompleted, t0.Add(time.Minute)), false},
		{"a turn at its category's cutoff", d, "ws-a", reg, note(hub.NotifyTurnCompleted, t0.Add(time.Hour)), true},
		{"a question of a disabled category", onlyCompleted, "ws-a", reg, note(hub.NotifyQuestionPending, t0.Add(time.Second)), false},
		{"a question in a workspace not covered", stale, "ws-b", reg, note(hub.NotifyQuestionPending, t0.Add(time.Second)), false},
		{"a question in a workspace that left the registry", d, "ws-a", []string{"ws-b"}, note(hub.NotifyQuestionPending, t0.Add(time.Second)), false},
		{"a question in a covered workspace without a cutoff yet", hub.PushDevice{AllWorkspaces: true, NeedsAnswer: true}, "ws-b", reg, note(hub.NotifyQuestionPending, t0), false},
		{"a kind no category has", d, "ws-a", reg, note("agent-crashed", t0.Add(time.Second)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(notify.Eligible(tc.device, tc.ws, tc.reg, tc.n), tc.want) // the rule's answer
		})
	}
}

// TestAWorkspaceRegisteredAfterAnAllWorkspacesEnrollmentCountsFromItsRestamp
// tells research §7.3's story: allWorkspaces is evaluated at event time,
// and a workspace registered later is stamped with a fresh cutoff, so what
// happened in it before is history.
func TestAWorkspaceRegisteredAfterAnAllWorkspacesEnrollmentCountsFromItsRestamp(t *testing.T) {
	is := is.New(t)
	reg := []string{"ws-a"}
	d := notify.Enroll(nil, enrollment([]string{}, true, true, true), "dev", "ada", login, reg, t0)
	reg = append(reg, "ws-later")
	is.Equal(notify.Covered(d, reg), []string{"ws-a", "ws-later"}) // the later workspace is covered
	early := note(hub.NotifyTurnCompleted, t0.Add(time.Minute))
	is.True(!notify.Eligible(d, "ws-later", reg, early)) // but not stamped yet: nothing counts

	t2 := t0.Add(2 * time.Minute)
	d, changed := notify.Restamp(d, reg, t2)
	is.True(changed) // the later workspace gained its cutoffs
	is.Equal(d.Cutoffs, []hub.PushCutoff{
		cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-a", hub.CategoryCompleted, t0),
		cut("ws-later", hub.CategoryNeedsAnswer, t2), cut("ws-later", hub.CategoryCompleted, t2),
	}) // at the restamp's time; the others unchanged
	is.True(!notify.Eligible(d, "ws-later", reg, early))                                           // what happened before is history
	is.True(notify.Eligible(d, "ws-later", reg, note(hub.NotifyTurnCompleted, t2)))                // from the restamp on it counts
	is.True(notify.Eligible(d, "ws-a", reg, note(hub.NotifyQuestionPending, t0.Add(time.Minute)))) // ws-a since the enrollment

	again, changed := notify.Restamp(d, reg, t2.Add(time.Hour))
	is.True(!changed)                  // a second restamp changes nothing
	is.Equal(again.Cutoffs, d.Cutoffs) // and keeps the first's times
}

func TestRestampDropsTheCutoffsOfWorkspacesThatLeftAndOfDisabledCategories(t *testing.T) {
	t1 := t0.Add(time.Hour)
	base := hub.PushDevice{WorkspaceIDs: []string{"ws-a", "ws-b"}, NeedsAnswer: true,
		Cutoffs: []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0)}}
	staleCategory := base
	staleCategory.Cutoffs = append(append([]hub.PushCutoff{}, base.Cutoffs...), cut("ws-a", hub.CategoryCompleted, t0))
	notSelected := base
	notSelected.WorkspaceIDs = []string{"ws-a"}
	all := base
	all.AllWorkspaces = true
	for _, tc := range []struct {
		name    string
		device  hub.PushDevice
		reg     []string
		want    []hub.PushCutoff
		changed bool
	}{
		{"nothing to change", base, []string{"ws-a", "ws-b"}, base.Cutoffs, false},
		{"a workspace that left the registry", base, []string{"ws-a"}, []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0)}, true},
		{"every workspace left", base, nil, nil, true},
		{"a workspace no longer selected", notSelected, []string{"ws-a", "ws-b"}, []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0)}, true},
		{"a disabled category", staleCategory, []string{"ws-a", "ws-b"}, base.Cutoffs, true},
		{"a workspace left and another came, under allWorkspaces", all, []string{"ws-b", "ws-c"},
			[]hub.PushCutoff{cut("ws-b", hub.CategoryNeedsAnswer, t0), cut("ws-c", hub.CategoryNeedsAnswer, t1)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d, changed := notify.Restamp(tc.device, tc.reg, t1)
			is.Equal(changed, tc.changed)          // whether anything changed
			is.Equal(len(d.Cutoffs), len(tc.want)) // as many cutoffs
			for i := range d.Cutoffs {
				is.Equal(d.Cutoffs[i], tc.want[i]) // the same ones
			}
		})
	}
}

func TestRestampLeavesTheGivenDeviceAlone(t *testing.T) {
	is := is.New(t)
	d := hub.PushDevice{WorkspaceIDs: []string{"ws-a", "ws-b"}, NeedsAnswer: true,
		Cutoffs: []hub.PushCutoff{cut("ws-a", hub.CategoryNeedsAnswer, t0), cut("ws-b", hub.CategoryNeedsAnswer, t0)}}
	_, changed := notify.Restamp(d, []string{"ws-b"}, t0.Add(time.Hour))
	is.True(changed)                                                 // ws-a's cutoff went
	is.Equal(d.Cutoffs[0], cut("ws-a", hub.CategoryNeedsAnswer, t0)) // from the copy only
}

func TestCategoriesAndWantsFollowTheTwoPreferences(t *testing.T) {
	is := is.New(t)
	both := hub.PushDevice{NeedsAnswer: true, Completed: true}
	is.Equal(notify.Categories(both), []hub.NotificationCategory{hub.CategoryNeedsAnswer, hub.CategoryCompleted}) // both, needsAnswer first
	is.Equal(len(notify.Categories(hub.PushDevice{})), 0)                                                         // none
	is.True(notify.Wants(hub.PushDevice{Completed: true}, hub.CategoryCompleted))                                 // completed wanted
	is.True(!notify.Wants(hub.PushDevice{Completed: true}, hub.CategoryNeedsAnswer))                              // needsAnswer not
	is.True(!notify.Wants(both, ""))                                                                              // nor a kind without category
	is.Equal(hub.NotifyPermissionPending.Category(), hub.CategoryNeedsAnswer)                                     // a permission needs an answer
	is.Equal(hub.NotifyQuestionPending.Category(), hub.CategoryNeedsAnswer)                                       // so does a question
	is.Equal(hub.NotifyTurnCompleted.Category(), hub.CategoryCompleted)                                           // a finished turn is completed
}
