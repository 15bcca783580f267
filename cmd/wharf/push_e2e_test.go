package main

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// Web Push end to end: a real Hub (push_harness_test.go), a real
// workspace child and the scripted agent, and a fake push service that
// decrypts every message and verifies its VAPID token with the Hub's key.
//
// Real time is what the rules are made of here: nothing is sent in the
// first 30 s after the Hub starts (everyone is recent, notify.RecentWindow),
// a needsAnswer waits its 10 s grace, a user stays recent 30 s after
// leaving. So the scenarios share one daemon and run in parallel, each on
// a workspace and a device of its own, measure from the daemon's start,
// wait only on channels with deadlines (the push service's records, the
// daemon's journal lines), and prove an absence by a later message that
// was sent.

// pushTestBound bounds a push test, and each of its scenarios, waiting
// out the rules' 30 s windows on a machine CI keeps busy with every other
// package's tests (2 minutes ran out there once, in the middle of a 30 s
// window; nothing hung).
const pushTestBound = 4 * time.Minute

// pushContext is t's context bounded by pushTestBound from now. A
// scenario takes its own once it runs: a parallel subtest waits for a
// slot (go test runs -parallel tests at once, GOMAXPROCS of them by
// default) after its parent has started the daemon, for minutes in CI,
// and a bound the parent took then was spent before the scenario began
// (three CI runs failed so, each scenario 0-7 s into it).
func pushContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), pushTestBound)
	t.Cleanup(cancel)
	return ctx
}

// TestPushNotificationsEndToEnd runs the scenarios that can share a
// daemon, in parallel.
func TestPushNotificationsEndToEnd(t *testing.T) {
	t.Parallel()
	h := startPushHub(pushContext(t), t)

	t.Run("APermissionIsSentOnceItsGraceHasPassed", func(t *testing.T) {
		t.Parallel()
		ctx := pushContext(t)
		is := is.New(t)
		ws := h.workspace(ctx, t, "alpha")
		conv := h.conversation(ctx, t, ws)
		dev, sub := h.enroll(ctx, t, h.ann, []string{ws}, true, true)

		// A finished turn: held while the Hub has just started, then sent.
		h.say(ctx, t, ws, conv, agentscript.Echo+" first")
		first := h.await(ctx, t, sub, 1)[0]
		is.Equal(first.P.Kind, string(hub.NotifyTurnCompleted))       // a finished turn
		is.True(!first.At.Before(h.started.Add(notify.RecentWindow))) // not before the Hub's first 30 s
		is.Equal(first.P.URL, conversationURL(ws, conv))              // opening its conversation
		is.Equal(first.P.Title, "alpha")                              // titled by its workspace
		is.Equal(first.P.Device, dev)                                 // for this device
		is.Equal(first.P.Body, "Agent turn finished")                 // saying what happened

		// The user is away now: a permission waits its grace, then goes.
		h.say(ctx, t, ws, conv, agentscript.Permission)
		h.journaled(ctx, t, dev, hub.NotifyPermissionPending, hub.DeliveryPending, 1)
		perm := h.await(ctx, t, sub, 2)[1]
		is.Equal(perm.P.Kind, string(hub.NotifyPermissionPending)) // the permission
		is.Equal(perm.P.URL, conversationURL(ws, conv))            // opening the conversation that waits
		is.True(perm.At.Sub(perm.Created) >= notify.Grace)         // not before its grace
		is.True(perm.P.ID != first.P.ID)                           // an occurrence of its own
		t.Logf("the permission was sent %v after it was asked", perm.At.Sub(perm.Created).Round(time.Millisecond))

		// The service worker acknowledges it; the device shows both.
		h.journaled(ctx, t, dev, hub.NotifyPermissionPending, hub.DeliverySent, 1)
		h.do(ctx, t, h.ann, "POST", "api/hub/notifications/acknowledgements", map[string]string{"device": dev, "id": perm.P.ID},
			"NotificationAcknowledged", http.StatusOK, nil)
		var st notificationState
		h.do(ctx, t, h.ann, "GET", "api/hub/notifications?device="+dev, nil, "NotificationState", http.StatusOK, &st)
		is.True(st.Device != nil && st.Device.LastSentAt != nil && st.Device.LastAcknowledgedAt != nil) // sent and acknowledged
		is.Equal(len(h.received(t, sub)), 2)                                                            // and nothing else
	})

	t.Run("AFinishedTurnIsNotSentWhileItsUserLooksAndIsOnceTheyLeft", func(t *testing.T) {
		t.Parallel()
		ctx := pushContext(t)
		is := is.New(t)
		ws := h.workspace(ctx, t, "bravo")
		conv := h.conversation(ctx, t, ws)
		dev, sub := h.enroll(ctx, t, h.ann, []string{ws}, false, true)

		viewer := h.login(ctx, t) // the same user, in another tab
		live := stream(ctx, t, viewer, ws)
		h.say(ctx, t, ws, conv, agentscript.Echo+" while looking")
		h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliveryDiscarded, 1) // dropped: its user looks at it
		left := h.leave(ctx, t, viewer, live)

		h.say(ctx, t, ws, conv, agentscript.Echo+" after leaving")
		h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliverySent, 1)
		got := h.received(t, sub)
		is.Equal(len(got), 1)                                      // one message: the turn after leaving, never the one seen
		is.True(got[0].Created.After(left.Add(-time.Millisecond))) // (it is the later turn)
		is.True(!got[0].At.Before(left.Add(notify.RecentWindow)))  // sent once the user had been gone 30 s
		is.Equal(got[0].P.Kind, string(hub.NotifyTurnCompleted))   // a finished turn
	})

	t.Run("APermissionAnsweredWithinItsGraceSendsNothing", func(t *testing.T) {
		t.Parallel()
		ctx := pushContext(t)
		is := is.New(t)
		ws := h.workspace(ctx, t, "charlie")
		conv := h.conversation(ctx, t, ws)
		dev, sub := h.enroll(ctx, t, h.ann, []string{ws}, true, true)
		h.say(ctx, t, ws, conv, agentscript.Echo+" first")
		h.await(ctx, t, sub, 1) // the Hub's first 30 s are over: the user is away

		h.say(ctx, t, ws, conv, agentscript.Permission)
		h.journaled(ctx, t, dev, hub.NotifyPermissionPending, hub.DeliveryPending, 1)
		h.answer(ctx, t, ws, conv, h.pendingPermission(ctx, t, ws, conv))
		answered := time.Now()
		h.journaled(ctx, t, dev, hub.NotifyPermissionPending, hub.DeliveryDiscarded, 1) // settled unsent

		// The marker: a second permission, left waiting, goes after its
		// grace, later than the first one would have.
		h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliveryPending, 2) // the answered turn finished
		h.say(ctx, t, ws, conv, agentscript.Permission)
		got := h.await(ctx, t, sub, 3)
		kinds := make([]string, len(got))
		for i, m := range got {
			kinds[i] = m.P.Kind
		}
		is.Equal(kinds, []string{"turn-completed", "turn-completed", "permission-pending"}) // the turns and one permission
		is.True(got[2].Created.After(answered.Add(-time.Millisecond)))                      // the second one
		is.True(got[2].At.Sub(got[2].Created) >= notify.Grace)                              // after its grace
	})

	t.Run("AnAcknowledgementThatOvertakesItsSendIsKept", func(t *testing.T) {
		t.Parallel()
		ctx := pushContext(t)
		is := is.New(t)
		ws := h.workspace(ctx, t, "foxtrot")
		conv := h.conversation(ctx, t, ws)
		dev, sub := h.enroll(ctx, t, h.ann, []string{ws}, false, true)
		// The push service takes the message and shows it, but answers the
		// Hub only later: a real service delivers to the device while it
		// answers, and a device may acknowledge before the Hub has
		// journaled its answer.
		h.svc.Reply(sub, pushservice.Reply{Hang: true})
		h.say(ctx, t, ws, conv, agentscript.Echo+" shown at once")
		m := h.await(ctx, t, sub, 1)[0]
		status, body, err := h.ann.Do(ctx, "POST", "api/hub/notifications/acknowledgements", map[string]string{"device": dev, "id": m.P.ID}, nil)
		h.svc.Release()
		is.NoErr(err) // answered
		valid(t, map[bool]string{true: "NotificationAcknowledged", false: "Error"}[status == http.StatusOK], body)
		is.Equal(status, http.StatusOK) // the device showed a message the Hub pushed to it
		h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliverySent, 1)
		var st notificationState
		h.do(ctx, t, h.ann, "GET", "api/hub/notifications?device="+dev, nil, "NotificationState", http.StatusOK, &st)
		is.True(st.Device.LastAcknowledgedAt != nil) // Settings shows the acknowledgement
	})

	t.Run("ARevokedLoginReceivesNothingMore", func(t *testing.T) {
		t.Parallel()
		ctx := pushContext(t)
		is := is.New(t)
		ws := h.workspace(ctx, t, "delta")
		conv := h.conversation(ctx, t, ws)
		phone := h.login(ctx, t)
		_, lostSub := h.enroll(ctx, t, phone, []string{ws}, false, true)
		_, keptSub := h.enroll(ctx, t, h.ann, []string{ws}, false, true)
		h.say(ctx, t, ws, conv, agentscript.Echo+" before")
		h.await(ctx, t, lostSub, 1) // the phone receives while its login stands
		h.await(ctx, t, keptSub, 1)

		var sessions struct {
			Sessions []deviceSessionView `json:"sessions"`
		}
		h.do(ctx, t, phone, "GET", "api/hub/sessions", nil, "DeviceSessionList", http.StatusOK, &sessions)
		i := slices.IndexFunc(sessions.Sessions, func(s deviceSessionView) bool { return s.Current })
		is.True(i >= 0) // the phone's own login
		h.do(ctx, t, h.ann, "POST", "api/hub/sessions/"+sessions.Sessions[i].Handle+"/revoke", nil, "RevocationResult", http.StatusOK, nil)

		h.say(ctx, t, ws, conv, agentscript.Echo+" after")
		h.await(ctx, t, keptSub, 2)
		h.say(ctx, t, ws, conv, agentscript.Echo+" later") // the marker, a turn after the phone's copy would have gone
		h.await(ctx, t, keptSub, 3)
		is.Equal(len(h.received(t, lostSub)), 1) // nothing reached the revoked login's device after the revocation
	})
}

// TestAPendingPushOutlivesAKillAndIsSentOnce kills the Hub with SIGKILL
// right after it journaled a finished turn it holds because its user was
// recent (the journal line is the test's signal; nothing can be sent yet),
// and checks that the restarted Hub sends it exactly once, with the same
// VAPID key.
func TestAPendingPushOutlivesAKillAndIsSentOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := pushContext(t)
	h := startPushHub(ctx, t)
	ws := h.workspace(ctx, t, "echo")
	conv := h.conversation(ctx, t, ws)
	dev, sub := h.enroll(ctx, t, h.ann, []string{ws}, false, true)

	viewer := h.login(ctx, t)
	left := h.leave(ctx, t, viewer, stream(ctx, t, viewer, ws)) // recent for 30 s from here
	h.say(ctx, t, ws, conv, agentscript.Echo+" before the kill")
	h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliveryPending, 1)
	killed := time.Now()
	is.NoErr(h.d.Kill()) // SIGKILL
	if !killed.Before(left.Add(notify.RecentWindow)) {
		t.Fatalf("the setup took %v: the kill came after the Hub could have sent", killed.Sub(h.started))
	}
	is.Equal(len(h.received(t, sub)), 0) // nothing was sent before the kill

	restarted := time.Now()
	h.restart(ctx, t)
	h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliverySent, 1)
	first := h.await(ctx, t, sub, 1)[0]
	is.True(first.Created.Before(killed))                         // the turn from before the kill
	is.True(!first.At.Before(restarted.Add(notify.RecentWindow))) // held through the restarted Hub's first 30 s

	// A later turn is the marker: the first one was not sent again.
	h.say(ctx, t, ws, conv, agentscript.Echo+" after the restart")
	h.journaled(ctx, t, dev, hub.NotifyTurnCompleted, hub.DeliverySent, 2)
	got := h.await(ctx, t, sub, 2)
	is.Equal(len(got), 2) // the journaled turn once, and the marker
	n := 0
	for _, m := range got {
		if m.P.ID == first.P.ID {
			n++
		}
	}
	is.Equal(n, 1)                        // exactly one message with the journaled delivery's payload id
	is.True(got[1].Created.After(killed)) // the marker is the later turn
	t.Logf("sent %v after the restart", first.At.Sub(restarted).Round(time.Millisecond))
}
