package notify_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// One delivery's way (research §7.5): presence gating before the first
// attempt, the deadlines, and the push service's answers.

var key = hub.PushDeliveryKey{WorkspaceID: "ws-a", DeviceID: "dev", NotificationID: `["agent","agent:c1","question-pending","r1"]`}

// journaled is the delivery of an occurrence of kind k created at t0,
// journaled at t0.
func journaled(k hub.NotificationKind) hub.PushDelivery {
	return notify.New(key, note(k, t0), t0)
}

func TestANewDeliveryIsPendingWithTheEventsWindowAndANeedsAnswerWaitsTheGrace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       hub.NotificationKind
		journaled  time.Time
		wantNextAt time.Time
	}{
		{"a finished turn is due at once", hub.NotifyTurnCompleted, t0, t0},
		{"a finished turn journaled later is due then", hub.NotifyTurnCompleted, t0.Add(time.Minute), t0.Add(time.Minute)},
		{"a question waits the grace", hub.NotifyQuestionPending, t0, t0.Add(notify.Grace)},
		{"a permission waits the grace", hub.NotifyPermissionPending, t0.Add(time.Second), t0.Add(notify.Grace)},
		{"a permission journaled after its grace is due then", hub.NotifyPermissionPending, t0.Add(time.Minute), t0.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d := notify.New(key, note(tc.kind, t0), tc.journaled)
			is.Equal(d.Key, key)                                                        // its identity
			is.Equal(d.State, hub.DeliveryPending)                                      // pending
			is.Equal(d.CreatedAt, tc.journaled)                                         // journaled now
			is.Equal(d.NextAt, tc.wantNextAt)                                           // due then
			is.Equal(d.Deadline, t0.Add(5*time.Minute))                                 // 5 min from the event
			is.Equal(d.Attempts, 0)                                                     // never tried
			is.True(d.HeldAt.IsZero() && d.ReleasedAt.IsZero() && d.SettledAt.IsZero()) // nothing else happened
		})
	}
}

func TestTheTimingsAreResearchs(t *testing.T) {
	is := is.New(t)
	is.Equal(notify.SendWindow, 5*time.Minute)     // an occurrence is worth sending 5 min
	is.Equal(notify.HoldLimit, 60*time.Minute)     // a question waits its user 60 min at most
	is.Equal(notify.MaxTTL, 5*time.Minute)         // TTL capped at 300 s
	is.Equal(notify.RejectedRetry, 60*time.Second) // another 4xx retried after 60 s
}

// held is a question held at t0+Grace while its user was present.
func held(t *testing.T) hub.PushDelivery {
	t.Helper()
	dec := notify.Step(journaled(hub.NotifyQuestionPending), notify.Present, t0.Add(notify.Grace))
	if dec.Delivery.State != hub.DeliveryHeld {
		t.Fatalf("not held: %+v", dec)
	}
	return dec.Delivery
}

// tried is d after one failed attempt, its retry due at next.
func tried(d hub.PushDelivery, next time.Time) hub.PushDelivery {
	d.Attempts, d.NextAt = 1, next
	return d
}

// settled is d settled in state at at.
func settled(d hub.PushDelivery, state hub.PushDeliveryState, at time.Time) hub.PushDelivery {
	d.State, d.SettledAt = state, at
	return d
}

// TestStepGatesTheFirstAttemptByPresence copies research §7.5's gating
// table row by row.
func TestStepGatesTheFirstAttemptByPresence(t *testing.T) {
	grace := t0.Add(notify.Grace)
	type want struct {
		action     notify.Action
		state      hub.PushDeliveryState
		changed    bool
		wake       time.Time
		deadline   time.Time
		heldAt     time.Time
		releasedAt time.Time
		settledAt  time.Time
	}
	window := t0.Add(notify.SendWindow)
	hold := t0.Add(notify.HoldLimit)
	for _, tc := range []struct {
		name     string
		delivery hub.PushDelivery
		presence notify.Presence
		now      time.Time
		want     want
	}{
		// completed: present → discarded, recent → wait, away → send.
		{"a finished turn its user is looking at is discarded", journaled(hub.NotifyTurnCompleted), notify.Present, t0,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: t0}},
		{"a finished turn its user just left waits until its deadline", journaled(hub.NotifyTurnCompleted), notify.Recent, t0,
			want{action: notify.Wait, state: hub.DeliveryPending, wake: window, deadline: window}},
		{"a finished turn of an away user is sent", journaled(hub.NotifyTurnCompleted), notify.Away, t0,
			want{action: notify.Send, state: hub.DeliveryPending, deadline: window}},
		{"a finished turn of an away user is sent until its deadline", journaled(hub.NotifyTurnCompleted), notify.Away, window.Add(-time.Nanosecond),
			want{action: notify.Send, state: hub.DeliveryPending, deadline: window}},
		{"a finished turn at its deadline is discarded", journaled(hub.NotifyTurnCompleted), notify.Away, window,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: window}},
		// needsAnswer: the grace first.
		{"a question within its grace waits for it", journaled(hub.NotifyQuestionPending), notify.Away, t0,
			want{action: notify.Wait, state: hub.DeliveryPending, wake: grace, deadline: window}},
		{"a permission within its grace waits for it, even with its user present", journaled(hub.NotifyPermissionPending), notify.Present, grace.Add(-time.Nanosecond),
			want{action: notify.Wait, state: hub.DeliveryPending, wake: grace, deadline: window}},
		// needsAnswer: not away → held until createdAt+60 min.
		{"a question its user is looking at is held", journaled(hub.NotifyQuestionPending), notify.Present, grace,
			want{action: notify.Wait, state: hub.DeliveryHeld, changed: true, wake: hold, deadline: hold, heldAt: grace}},
		{"a permission its user just left is held", journaled(hub.NotifyPermissionPending), notify.Recent, grace.Add(time.Second),
			want{action: notify.Wait, state: hub.DeliveryHeld, changed: true, wake: hold, deadline: hold, heldAt: grace.Add(time.Second)}},
		{"a question of an away user is sent after its grace", journaled(hub.NotifyQuestionPending), notify.Away, grace,
			want{action: notify.Send, state: hub.DeliveryPending, deadline: window}},
		{"a held question whose user stays waits until the hold limit", held(t), notify.Present, t0.Add(30 * time.Minute),
			want{action: notify.Wait, state: hub.DeliveryHeld, wake: hold, deadline: hold, heldAt: grace}},
		{"a held question whose user is recent still waits", held(t), notify.Recent, t0.Add(30 * time.Minute),
			want{action: notify.Wait, state: hub.DeliveryHeld, wake: hold, deadline: hold, heldAt: grace}},
		// held then away → released, pending, releasedAt+5 min, sent.
		{"a held question whose user walked away is released and sent", held(t), notify.Away, t0.Add(30 * time.Minute),
			want{action: notify.Send, state: hub.DeliveryPending, changed: true, deadline: t0.Add(35 * time.Minute),
				heldAt: grace, releasedAt: t0.Add(30 * time.Minute)}},
		{"a held question released past its event's window still gets one", held(t), notify.Away, hold.Add(-time.Second),
			want{action: notify.Send, state: hub.DeliveryPending, changed: true, deadline: hold.Add(-time.Second + notify.SendWindow),
				heldAt: grace, releasedAt: hold.Add(-time.Second)}},
		// held past 60 min → discarded.
		{"a held question at the hold limit is discarded", held(t), notify.Present, hold,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: hold, heldAt: grace, settledAt: hold}},
		{"a held question at the hold limit is discarded even if its user left", held(t), notify.Away, hold,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: hold, heldAt: grace, settledAt: hold}},
		// deadline passed → discarded.
		{"a question past its window before it was held is discarded", journaled(hub.NotifyQuestionPending), notify.Present, window,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: window}},
		{"a question past its window is discarded even for an away user", journaled(hub.NotifyQuestionPending), notify.Away, window.Add(time.Hour),
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: window.Add(time.Hour)}},
		// a delivery already tried is not gated again.
		{"a finished turn tried once is retried though its user is present", tried(journaled(hub.NotifyTurnCompleted), t0.Add(2*time.Second)), notify.Present, t0.Add(2 * time.Second),
			want{action: notify.Send, state: hub.DeliveryPending, deadline: window}},
		{"a question tried once is retried though its user is present", tried(journaled(hub.NotifyQuestionPending), t0.Add(time.Minute)), notify.Present, t0.Add(time.Minute),
			want{action: notify.Send, state: hub.DeliveryPending, deadline: window}},
		{"a delivery tried once waits for its retry", tried(journaled(hub.NotifyTurnCompleted), t0.Add(2*time.Second)), notify.Away, t0.Add(time.Second),
			want{action: notify.Wait, state: hub.DeliveryPending, wake: t0.Add(2 * time.Second), deadline: window}},
		{"a delivery whose retry falls past its deadline is discarded", tried(journaled(hub.NotifyTurnCompleted), t0.Add(6*time.Minute)), notify.Away, t0.Add(6 * time.Minute),
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: t0.Add(6 * time.Minute)}},
		// settled → nothing.
		{"a sent delivery stays sent", settled(journaled(hub.NotifyTurnCompleted), hub.DeliverySent, t0), notify.Away, t0.Add(time.Hour),
			want{action: notify.Wait, state: hub.DeliverySent, deadline: window, settledAt: t0}},
		{"a discarded delivery stays discarded", settled(journaled(hub.NotifyQuestionPending), hub.DeliveryDiscarded, t0), notify.Away, t0.Add(time.Minute),
			want{action: notify.Wait, state: hub.DeliveryDiscarded, deadline: window, settledAt: t0}},
		// a kind no device receives.
		{"an occurrence of an unknown kind is discarded", journaled("agent-crashed"), notify.Away, t0,
			want{action: notify.Settle, state: hub.DeliveryDiscarded, changed: true, deadline: window, settledAt: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dec := notify.Step(tc.delivery, tc.presence, tc.now)
			d := dec.Delivery
			is.Equal(dec.Action, tc.want.action)       // the action
			is.Equal(d.State, tc.want.state)           // the state
			is.Equal(dec.Changed, tc.want.changed)     // journaled again or not
			is.Equal(dec.Wake, tc.want.wake)           // when to look again
			is.Equal(d.Deadline, tc.want.deadline)     // the deadline
			is.Equal(d.HeldAt, tc.want.heldAt)         // when held
			is.Equal(d.ReleasedAt, tc.want.releasedAt) // when released
			is.Equal(d.SettledAt, tc.want.settledAt)   // when settled
			is.Equal(d.Key, tc.delivery.Key)           // the same delivery
			is.Equal(d.Attempts, tc.delivery.Attempts) // Step never attempts
			if !dec.Changed {
				is.Equal(d, tc.delivery) // nothing changed means nothing changed
			}
		})
	}
}

// TestAQuestionHeldWhileItsUserWorksIsSentOnceTheyLeave tells the whole
// story of a held question: grace, hold, release, a fresh window.
func TestAQuestionHeldWhileItsUserWorksIsSentOnceTheyLeave(t *testing.T) {
	is := is.New(t)
	d := journaled(hub.NotifyQuestionPending)
	dec := notify.Step(d, notify.Present, t0)
	is.Equal(dec.Action, notify.Wait)        // the grace first
	is.Equal(dec.Wake, t0.Add(notify.Grace)) // until it ends
	dec = notify.Step(dec.Delivery, notify.Present, dec.Wake)
	is.Equal(dec.Delivery.State, hub.DeliveryHeld) // then held
	left := t0.Add(42 * time.Minute)
	dec = notify.Step(dec.Delivery, notify.Away, left)
	is.Equal(dec.Action, notify.Send)                            // sent once away
	is.Equal(dec.Delivery.Deadline, left.Add(notify.SendWindow)) // within a fresh window
	is.Equal(notify.TTL(dec.Delivery, left), notify.MaxTTL)      // the whole of it as TTL
	d, gone := notify.Sent(dec.Delivery, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 503}}, left)
	is.True(!gone) // the device stays
	dec = notify.Step(d, notify.Present, d.NextAt)
	is.Equal(dec.Action, notify.Send) // its retry is not held again though the user came back
}

func TestTTLIsWhatIsLeftOfTheWindowAtMostFiveMinutesNeverNegative(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Time
		want     time.Duration
	}{
		{"an hour left", t0.Add(time.Hour), notify.MaxTTL},
		{"five minutes left", t0.Add(5 * time.Minute), 5 * time.Minute},
		{"two minutes left", t0.Add(2 * time.Minute), 2 * time.Minute},
		{"half a second left", t0.Add(500 * time.Millisecond), 500 * time.Millisecond},
		{"nothing left", t0, 0},
		{"past the deadline", t0.Add(-time.Minute), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(notify.TTL(hub.PushDelivery{Deadline: tc.deadline}, t0), tc.want) // the TTL
		})
	}
}

// TestBackoffDoublesFromOneSecondUpToThirtySeconds copies
// min(1 s·2^min(attempts,5), 30 s).
func TestBackoffDoublesFromOneSecondUpToThirtySeconds(t *testing.T) {
	is := is.New(t)
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for attempts, w := range want {
		is.Equal(notify.Backoff(attempts), w*time.Second) // the table
	}
	is.Equal(notify.Backoff(-1), time.Second)       // a negative count is none
	is.Equal(notify.Backoff(1<<40), 30*time.Second) // a huge one does not overflow
}

// TestSentFoldsThePushServicesAnswer copies research §7.5's table of
// answers row by row.
func TestSentFoldsThePushServicesAnswer(t *testing.T) {
	now := t0.Add(time.Minute)
	first := journaled(hub.NotifyTurnCompleted)
	fifth := first
	fifth.Attempts = 4
	network := errors.New("dial tcp: connection refused")
	for _, tc := range []struct {
		name     string
		delivery hub.PushDelivery
		answer   notify.Answer
		state    hub.PushDeliveryState
		gone     bool
		next     time.Duration // from now; 0 when settled
	}{
		{"a 201 is sent", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushAccepted, Status: 201}}, hub.DeliverySent, false, 0},
		{"a 404 is discarded and the device gone", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushGone, Status: 404}}, hub.DeliveryDiscarded, true, 0},
		{"a 410 is discarded and the device gone", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushGone, Status: 410}}, hub.DeliveryDiscarded, true, 0},
		{"a 429 with a Retry-After is retried after it", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: 20 * time.Second}}, hub.DeliveryPending, false, 20 * time.Second},
		{"a 429 with a long Retry-After waits 300 s at most", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: time.Hour}}, hub.DeliveryPending, false, 300 * time.Second},
		{"a 429 with a shorter Retry-After than the backoff waits the backoff", fifth, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: time.Second}}, hub.DeliveryPending, false, 30 * time.Second},
		{"a 429 without a Retry-After waits the backoff", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429}}, hub.DeliveryPending, false, notify.Backoff(1)},
		{"a 503 waits the backoff", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 503}}, hub.DeliveryPending, false, 2 * time.Second},
		{"a fifth 500 waits the capped backoff", fifth, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 500}}, hub.DeliveryPending, false, 30 * time.Second},
		{"a 400 is retried after 60 s", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRejected, Status: 400}}, hub.DeliveryPending, false, 60 * time.Second},
		{"a 403 (a bad VAPID signature) is retried after 60 s", fifth, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRejected, Status: 403}}, hub.DeliveryPending, false, 60 * time.Second},
		{"a network error waits the backoff", first, notify.Answer{Err: network}, hub.DeliveryPending, false, 2 * time.Second},
		{"a network error after a 201 is not taken for a send", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushAccepted, Status: 201}, Err: network}, hub.DeliveryPending, false, 2 * time.Second},
		{"a network error after a 404 does not remove the device", first, notify.Answer{Result: hub.PushResult{Outcome: hub.PushGone, Status: 404}, Err: network}, hub.DeliveryPending, false, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d, gone := notify.Sent(tc.delivery, tc.answer, now)
			is.Equal(d.State, tc.state)                  // the state
			is.Equal(gone, tc.gone)                      // whether the device is gone
			is.Equal(d.Attempts, tc.delivery.Attempts+1) // one attempt more
			is.Equal(d.Deadline, tc.delivery.Deadline)   // the deadline unchanged
			if tc.state.Settled() {
				is.Equal(d.SettledAt, now)             // settled now
				is.Equal(d.NextAt, tc.delivery.NextAt) // with nothing due
			} else {
				is.True(d.SettledAt.IsZero())        // unsettled
				is.Equal(d.NextAt.Sub(now), tc.next) // due after the wait
			}
		})
	}
}

// TestTheNthFailedAttemptWaitsTheNthBackoff pins which backoff follows
// which attempt.
func TestTheNthFailedAttemptWaitsTheNthBackoff(t *testing.T) {
	is := is.New(t)
	d := journaled(hub.NotifyTurnCompleted)
	now := t0
	for n := 1; n <= 7; n++ {
		d, _ = notify.Sent(d, notify.Answer{Err: errors.New("timeout")}, now)
		is.Equal(d.Attempts, n)                        // counted
		is.Equal(d.NextAt.Sub(now), notify.Backoff(n)) // the n-th backoff
		now = d.NextAt
	}
}

// TestARetryDuePastTheDeadlineIsDiscardedByTheNextStep: a long
// Retry-After does not stretch the window.
func TestARetryDuePastTheDeadlineIsDiscardedByTheNextStep(t *testing.T) {
	is := is.New(t)
	d := journaled(hub.NotifyTurnCompleted)
	d, _ = notify.Sent(d, notify.Answer{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: 300 * time.Second}}, t0.Add(time.Minute))
	is.True(d.NextAt.After(d.Deadline)) // due after the deadline
	dec := notify.Step(d, notify.Away, d.NextAt)
	is.Equal(dec.Action, notify.Settle)                 // so settled
	is.Equal(dec.Delivery.State, hub.DeliveryDiscarded) // discarded unsent
}
