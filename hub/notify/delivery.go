package notify

import (
	"time"

	"github.com/wharfhub/wharf/hub"
)

// One delivery's way from the journal to a push service: a small state
// machine over hub.PushDelivery. Step decides, at a given time and
// presence, what happens next; Sent folds in the push service's answer.

// Timings of deliveries.
const (
	// Grace delays a needsAnswer delivery, so a permission or question
	// answered at once (the user was still at the keyboard) sends nothing.
	Grace = 10 * time.Second
	// SendWindow is how long an occurrence stays worth sending: from the
	// event, or from its release after a hold.
	SendWindow = 5 * time.Minute
	// HoldLimit bounds how long a needsAnswer waits for its user to leave.
	HoldLimit = 60 * time.Minute
	// MaxTTL caps the TTL a push service is given.
	MaxTTL = 5 * time.Minute
	// RejectedRetry is the wait after a refusal that retrying at once
	// would not fix (another 4xx, a configuration error).
	RejectedRetry = 60 * time.Second
)

// New returns the journal entry for occurrence n of key, created at now.
func New(key hub.PushDeliveryKey, n hub.Notification, now time.Time) hub.PushDelivery {
	d := hub.PushDelivery{Key: key, Notification: n, State: hub.DeliveryPending, CreatedAt: now, NextAt: now,
		Deadline: n.CreatedAt.Add(SendWindow)}
	if n.Kind.Category() == hub.CategoryNeedsAnswer {
		d.NextAt = later(now, n.CreatedAt.Add(Grace))
	}
	return d
}

// Action is what Step decided.
type Action int

// The actions.
const (
	// Wait: nothing to do before Wake (zero: until presence changes).
	Wait Action = iota + 1
	// Send: send now.
	Send
	// Settle: the delivery was settled (discarded); store it.
	Settle
)

// Decision is Step's answer: the delivery as it now stands, what to do,
// and when to look again.
type Decision struct {
	Delivery hub.PushDelivery
	Action   Action
	// Changed says Delivery differs from what was given: it is to be
	// journaled before acting.
	Changed bool
	// Wake is when to call Step again; zero when only a change of
	// presence (or a send's answer) can change anything.
	Wake time.Time
}

// Step decides what becomes of unsent delivery d at now, its user being
// at presence p. Presence gates the first attempt only: a completed turn
// is dropped while its user is present and waits while recent; a
// needsAnswer is held while its user is not away (HoldLimit from the
// event at most) and released, with a fresh SendWindow, once away.
func Step(d hub.PushDelivery, p Presence, now time.Time) Decision {
	settle := func(state hub.PushDeliveryState) Decision {
		d.State, d.SettledAt = state, now
		return Decision{Delivery: d, Action: Settle, Changed: true}
	}
	if d.State.Settled() {
		return Decision{Delivery: d, Action: Wait}
	}
	if !now.Before(d.Deadline) {
		return settle(hub.DeliveryDiscarded)
	}
	if d.State == hub.DeliveryPending && now.Before(d.NextAt) {
		return Decision{Delivery: d, Action: Wait, Wake: d.NextAt}
	}
	if d.Attempts > 0 {
		return Decision{Delivery: d, Action: Send}
	}
	switch d.Notification.Kind.Category() {
	case hub.CategoryCompleted:
		switch p {
		case Present:
			return settle(hub.DeliveryDiscarded)
		case Recent:
			return Decision{Delivery: d, Action: Wait, Wake: d.Deadline}
		}
		return Decision{Delivery: d, Action: Send}
	case hub.CategoryNeedsAnswer:
		if p != Away {
			if d.State == hub.DeliveryHeld {
				return Decision{Delivery: d, Action: Wait, Wake: d.Deadline}
			}
			d.State, d.HeldAt, d.Deadline = hub.DeliveryHeld, now, d.Notification.CreatedAt.Add(HoldLimit)
			if !now.Before(d.Deadline) {
				return settle(hub.DeliveryDiscarded)
			}
			return Decision{Delivery: d, Action: Wait, Changed: true, Wake: d.Deadline}
		}
		if d.State == hub.DeliveryHeld {
			d.State, d.ReleasedAt, d.Deadline = hub.DeliveryPending, now, now.Add(SendWindow)
			return Decision{Delivery: d, Action: Send, Changed: true}
		}
		return Decision{Delivery: d, Action: Send}
	}
	return settle(hub.DeliveryDiscarded) // a kind no device receives
}

// TTL is the time to live a push service is given for d at now: what is
// left of its window, at most MaxTTL, never negative.
func TTL(d hub.PushDelivery, now time.Time) time.Duration {
	left := d.Deadline.Sub(now)
	return max(0, min(left, MaxTTL))
}

// Answer is how one attempt ended.
type Answer struct {
	Result hub.PushResult
	// Err is set when the push service's answer is unknown (a network
	// failure, a timeout): the attempt is retried.
	Err error
}

// Sent folds the answer of an attempt into d at now. gone reports that
// the subscription no longer exists (404 or 410): the device is to be
// removed. A retry comes after max(Retry-After, backoff), the backoff
// 1 s doubling up to 30 s; one past the deadline is discarded by the next
// Step.
func Sent(d hub.PushDelivery, a Answer, now time.Time) (_ hub.PushDelivery, gone bool) {
	d.Attempts++
	if a.Err == nil {
		switch a.Result.Outcome {
		case hub.PushAccepted:
			d.State, d.SettledAt = hub.DeliverySent, now
			return d, false
		case hub.PushGone:
			d.State, d.SettledAt = hub.DeliveryDiscarded, now
			return d, true
		case hub.PushRejected:
			d.NextAt = now.Add(RejectedRetry)
			return d, false
		}
	}
	wait := Backoff(d.Attempts)
	if a.Err == nil && a.Result.Outcome == hub.PushRetry {
		wait = max(wait, min(a.Result.RetryAfter, 300*time.Second))
	}
	d.NextAt = now.Add(wait)
	return d, false
}

// Backoff is the wait before retry number attempts: min(1 s·2^min(attempts,5), 30 s).
func Backoff(attempts int) time.Duration {
	return min(time.Second<<min(max(attempts, 0), 5), 30*time.Second)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
