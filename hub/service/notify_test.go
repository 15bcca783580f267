package service_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
	"github.com/wharfhub/wharf/hub/service"
)

// pushEnv is an env with one running workspace, app, and a real device
// session of ann's, whose recent window after the Hub's start has passed:
// ann is away from every workspace.
type pushEnv struct {
	*env
	app    string
	sess   hub.DeviceSession
	secret string // the session's id
}

func newPushEnv(t *testing.T) *pushEnv {
	t.Helper()
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	e.start(app)
	sess, secret := e.login()
	e.clock.Advance(notify.RecentWindow)
	return &pushEnv{env: e, app: app, sess: sess, secret: secret}
}

// wait bounds a test's waits for the Hub's background work.
func (e *pushEnv) wait() context.Context {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// subscription is a browser's push subscription on a real push service's
// host, with real keys.
func subscription(t *testing.T, endpoint string) map[string]any {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}}
}

// raw makes a request body of v, as the HTTP layer hands it over.
func raw(t *testing.T, v map[string]any) notify.RawEnrollment {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var r notify.RawEnrollment
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

const endpoint = "https://fcm.googleapis.com/fcm/send/ann-phone"

// enroll enrolls a device of sess for both categories of app.
func (e *pushEnv) enroll(sess hub.DeviceSession, endpoint string) hub.NotificationState {
	e.t.Helper()
	st, err := e.EnrollNotifications(e.ctx, sess, raw(e.t, map[string]any{"subscription": subscription(e.t, endpoint),
		"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	if err != nil {
		e.t.Fatalf("enroll: %v", err)
	}
	return st
}

// journaled waits until the journal has a delivery of notification id in
// state, and returns it.
func (e *pushEnv) journaled(ctx context.Context, id string, state hub.PushDeliveryState) hub.PushDelivery {
	e.t.Helper()
	find := func(j []hub.PushDelivery) int {
		return slices.IndexFunc(j, func(d hub.PushDelivery) bool { return d.Key.NotificationID == id && d.State == state })
	}
	j, err := service.WaitPushJournal(ctx, e.Hub, func(j []hub.PushDelivery) bool { return find(j) >= 0 })
	if err != nil {
		e.t.Fatalf("no %s delivery of %s in the journal: %v (%+v)", state, id, err, j)
	}
	return j[find(j)]
}

// payload decodes a push's payload.
func payload(t *testing.T, p fakes.FakePush) notify.Payload {
	t.Helper()
	var out notify.Payload
	if err := json.Unmarshal(p.Message.Payload, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAPermissionRequestReachesAnAwayUserOnceTheGraceHasPassed(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	st := e.enroll(e.sess, endpoint)
	is.True(st.Device != nil && st.Device.Active) // the device is enrolled under this login

	n := fakes.Notice("codex:c1", hub.NotifyPermissionPending, "r1", e.clock.Now())
	e.backend.Notify(e.app, n)
	d := e.journaled(ctx, n.ID, hub.DeliveryPending)
	is.True(d.NextAt.Equal(e.clock.Now().Add(notify.Grace))) // it waits the grace first
	e.clock.Advance(notify.Grace)

	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // the push service got it
	p := payload(t, pushes[0])
	is.Equal(p.Kind, "permission-pending")                                  // what happened
	is.Equal(p.URL, "/w/"+e.app+"/c/codex:c1")                              // the conversation that waits
	is.Equal(p.ID, notify.PayloadID(d.Key))                                 // the delivery's identity
	is.Equal(p.Device, st.Device.ID)                                        // the device, for its acknowledgement
	is.Equal(pushes[0].Subscription.Endpoint, endpoint)                     // sent to the device's subscription
	is.True(pushes[0].Message.TTL > 0)                                      // with what is left of its window
	e.journaled(ctx, n.ID, hub.DeliverySent)                                // settled as sent
	is.NoErr(service.CheckSchema("PushPayload", pushes[0].Message.Payload)) // the documented payload
}

func TestAFinishedTurnIsDroppedWhileItsUserLooksAndSentOnceTheyLeft(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	stream, err := e.OpenLive(e.ctx, e.sess, e.app, false, nil)
	is.NoErr(err) // ann has the workspace open

	seen := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, seen)
	e.journaled(ctx, seen.ID, hub.DeliveryDiscarded) // she saw it finish

	stream.Close()
	later := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t2", e.clock.Now())
	e.backend.Notify(e.app, later)
	e.journaled(ctx, later.ID, hub.DeliveryPending) // she just left: it waits
	service.PushStep(e.Hub)
	is.Equal(len(e.pusher.Pushes()), 0) // nothing while she is recent
	e.clock.Advance(notify.RecentWindow)
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err)                                               // once away, it is sent
	is.Equal(payload(t, pushes[0]).Kind, "turn-completed")      // the later turn
	is.Equal(payload(t, pushes[0]).Body, "Agent turn finished") // said plainly
	e.journaled(ctx, later.ID, hub.DeliverySent)                // and settled
	is.Equal(len(e.pusher.Pushes()), 1)                         // the one she saw never was
}

func TestAQuestionAnsweredWithinTheGraceSendsNothing(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	n := fakes.Notice("codex:c1", hub.NotifyQuestionPending, "q1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryPending)
	e.backend.Resolve(e.app, n.ID)
	e.journaled(ctx, n.ID, hub.DeliveryDiscarded) // answered at once
	e.clock.Advance(notify.Grace)
	service.PushStep(e.Hub)
	is.Equal(len(e.pusher.Pushes()), 0) // nothing was sent
}

func TestAQuestionIsHeldWhileItsUserIsThereAndSentOnceTheyWalkAway(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	stream, err := e.OpenLive(e.ctx, e.sess, e.app, false, nil)
	is.NoErr(err) // ann has the workspace open
	n := fakes.Notice("codex:c1", hub.NotifyQuestionPending, "q1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryPending)
	e.clock.Advance(notify.Grace)
	held := e.journaled(ctx, n.ID, hub.DeliveryHeld)
	is.True(held.Deadline.Equal(n.CreatedAt.Add(notify.HoldLimit))) // held for an hour at most

	stream.Close()
	e.clock.Advance(notify.RecentWindow)
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err)                                            // released once she is away
	is.Equal(payload(t, pushes[0]).Kind, "question-pending") // the question
	sent := e.journaled(ctx, n.ID, hub.DeliverySent)
	is.True(!sent.ReleasedAt.IsZero()) // released, then sent
}

func TestAnOccurrenceToldAgainAfterAGapIsDeliveredOnce(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	n := fakes.Notice("codex:c1", hub.NotifyPermissionPending, "r1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryPending)
	feed, err := e.backend.WaitNotificationFeed(ctx, e.app, 1)
	is.NoErr(err) // the Hub's feed
	e.backend.ForgetNotices(e.app)
	feed.End(nil) // the feed ends; its cursor is no longer known
	_, err = e.backend.WaitNotificationFeed(ctx, e.app, 2)
	is.NoErr(err) // the Hub reconnected, and got a snapshot listing it again

	e.clock.Advance(notify.Grace)
	_, err = e.pusher.Wait(ctx, 1)
	is.NoErr(err) // sent
	e.journaled(ctx, n.ID, hub.DeliverySent)
	service.PushStep(e.Hub)
	is.Equal(len(e.pusher.Pushes()), 1) // once
	count := 0
	for _, d := range service.PushJournal(e.Hub) {
		if d.Key.NotificationID == n.ID {
			count++
		}
	}
	is.Equal(count, 1) // one delivery per (workspace, device, occurrence)
}

func TestWhatHappenedBeforeTheEnrollmentIsNeverSent(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	old := fakes.Notice("codex:c1", hub.NotifyPermissionPending, "r0", e.clock.Now())
	e.backend.Notify(e.app, old)
	e.clock.Advance(time.Second)
	e.enroll(e.sess, endpoint) // the snapshot lists old as pending
	n := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliverySent)
	for _, d := range service.PushJournal(e.Hub) {
		is.True(d.Key.NotificationID != old.ID) // history is not journaled
	}
	is.Equal(len(e.pusher.Pushes()), 1) // only what came after was sent
}

func TestAHubRestartSendsWhatWasJournaledExactlyOnce(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	stream, err := e.OpenLive(e.ctx, e.sess, e.app, false, nil)
	is.NoErr(err)
	stream.Close() // ann just left: a finished turn waits while she is recent
	n := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryPending)

	e.restart()
	e.clock.Advance(notify.RecentWindow) // the new Hub's start window
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // the new Hub sent what the old one journaled
	e.journaled(ctx, n.ID, hub.DeliverySent)
	service.PushStep(e.Hub)
	is.Equal(len(e.pusher.Pushes()), 1)                    // once
	is.Equal(payload(t, pushes[0]).Kind, "turn-completed") // the turn
}

func TestALoginThatEndedStopsItsDevicesSends(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	is.NoErr(e.Logout(e.ctx, e.secret)) // ann logs out on that device
	n := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryDiscarded) // checked again at send time
	is.Equal(len(e.pusher.Pushes()), 0)           // nothing reached the device
}

func TestAGoneSubscriptionRemovesItsDevice(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	st := e.enroll(e.sess, endpoint)
	e.pusher.Answer(endpoint, 410, 0)
	n := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, n)
	_, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // tried, and answered 410
	_, err = service.WaitPushJournal(ctx, e.Hub, func(j []hub.PushDelivery) bool { return len(j) == 0 })
	is.NoErr(err) // the device went, with its deliveries
	got, err := e.Notifications(e.ctx, e.sess, st.Device.ID)
	is.NoErr(err)
	is.Equal(got.Device, nil) // the device is no more
}

func TestATooManyRequestsAnswerIsRetriedAfterItsRetryAfter(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	e.enroll(e.sess, endpoint)
	e.pusher.Answer(endpoint, 429, 20*time.Second)
	n := fakes.Notice("codex:c1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(e.app, n)
	first, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // tried
	d, err := service.WaitPushJournal(ctx, e.Hub, func(j []hub.PushDelivery) bool { return len(j) == 1 && j[0].Attempts == 1 })
	is.NoErr(err)                                                   // its answer journaled
	is.True(d[0].NextAt.Equal(e.clock.Now().Add(20 * time.Second))) // not before Retry-After
	e.pusher.Answer(endpoint, 201, 0)
	e.clock.Advance(20 * time.Second)
	both, err := e.pusher.Wait(ctx, 2)
	is.NoErr(err)                                             // tried again
	is.Equal(payload(t, both[1]).ID, payload(t, first[0]).ID) // the same payload id
	e.journaled(ctx, n.ID, hub.DeliverySent)                  // and sent
}

func TestAnEnrollmentWaitsForTheFeedsAndNamesTheOnesThatDidNotAnswer(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	release := e.backend.HoldNotifications(e.app)
	defer release()
	done := make(chan error, 1)
	go func() {
		_, err := e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"subscription": subscription(t, endpoint),
			"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
		done <- err
	}()
	_, err := e.backend.WaitNotificationOpens(ctx, e.app, 1)
	is.NoErr(err) // the Hub opened the feed
	e.clock.Advance(3 * time.Second)
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatal("the enrollment did not answer")
	}
	is.Equal(hub.KindOf(err), hub.Unavailable)                                          // 503
	is.Equal(hub.MessageOf(err), "notification feed for app did not answer; try again") // naming the workspace
	st, err := e.Notifications(e.ctx, e.sess, "")
	is.NoErr(err)
	is.Equal(st.Device, nil) // nothing was stored
}

func TestAnAllWorkspacesDeviceCoversAWorkspaceRegisteredLater(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	_, err := e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"subscription": subscription(t, endpoint),
		"workspaceIds": []string{}, "allWorkspaces": true, "needsAnswer": false, "completed": true}))
	is.NoErr(err) // enrolled for every workspace
	web := e.register(e.repo("/home/ann/web"))
	e.start(web)
	_, err = e.backend.WaitNotificationFeed(ctx, web, 1)
	is.NoErr(err) // the Hub observes the new workspace
	n := fakes.Notice("codex:w1", hub.NotifyTurnCompleted, "t1", e.clock.Now())
	e.backend.Notify(web, n)
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err)                                            // the new workspace's turn is sent
	is.Equal(payload(t, pushes[0]).URL, "/w/web/c/codex:w1") // from the new workspace
}

func TestRemovingADeviceDiscardsWhatItHadYetToReceive(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	st := e.enroll(e.sess, endpoint)
	n := fakes.Notice("codex:c1", hub.NotifyPermissionPending, "r1", e.clock.Now())
	e.backend.Notify(e.app, n)
	e.journaled(ctx, n.ID, hub.DeliveryPending)
	is.NoErr(e.RemoveNotifications(e.ctx, e.sess, st.Device.ID)) // removed
	is.Equal(len(service.PushJournal(e.Hub)), 0)                 // nothing left to send
	e.clock.Advance(notify.Grace)
	service.PushStep(e.Hub)
	is.Equal(len(e.pusher.Pushes()), 0) // and nothing sent
	err := e.RemoveNotifications(e.ctx, e.sess, st.Device.ID)
	is.Equal(hub.MessageOf(err), "notification device not found") // a second removal finds nothing
}

func TestEnrollmentConflictsAndLimits(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	st := e.enroll(e.sess, endpoint)
	e.user("bob")
	bob, err := e.Login(e.ctx, hub.LoginRequest{Name: "bob", Password: "correct horse battery", ClientAddr: "127.0.0.1"})
	is.NoErr(err)
	_, err = e.EnrollNotifications(e.ctx, bob.Session, raw(t, map[string]any{"subscription": subscription(t, endpoint),
		"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	is.Equal(hub.MessageOf(err), "subscription belongs to another account; renew it on this device") // ann's subscription
	is.Equal(hub.KindOf(err), hub.Conflict)                                                          // 409
	_, err = e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"id": st.Device.ID,
		"subscription": subscription(t, endpoint+"-other"), "workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	is.NoErr(err) // a device renews its own subscription under its id
	_, err = e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"subscription": subscription(t, endpoint+"-other"),
		"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	is.NoErr(err) // the same subscription without an id finds the device by its endpoint
	err = e.RemoveNotifications(e.ctx, bob.Session, st.Device.ID)
	is.Equal(hub.KindOf(err), hub.NotFound) // another user's device is not found
	got, err := e.Notifications(e.ctx, bob.Session, st.Device.ID)
	is.NoErr(err)
	is.Equal(got.Device, nil) // nor shown

	for i := 1; i < notify.MaxDevicesOfUser; i++ {
		e.enroll(e.sess, endpoint+"-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	_, err = e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"subscription": subscription(t, endpoint+"-33"),
		"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	is.Equal(hub.MessageOf(err), "device limit reached") // 32 active devices at most
}

func TestAHubWithoutAContactRefusesEnrollmentSayingWhatToSet(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	e.pusher.SetConfigured(false)
	st, err := e.Notifications(e.ctx, e.sess, "")
	is.NoErr(err)
	is.True(!st.Configured && st.PublicKey == nil) // push is off
	_, err = e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{"subscription": subscription(t, endpoint),
		"workspaceIds": []string{e.app}, "needsAnswer": true, "completed": true}))
	is.Equal(hub.KindOf(err), hub.Unavailable)                      // 503
	is.True(strings.Contains(hub.MessageOf(err), "--push-contact")) // saying what to set
}

func TestATestMessageIsSentAndItsAcknowledgementShows(t *testing.T) {
	is := is.New(t)
	e := newPushEnv(t)
	ctx := e.wait()
	st := e.enroll(e.sess, endpoint)
	is.NoErr(e.TestNotification(e.ctx, e.sess, st.Device.ID)) // queued
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // sent at once, whoever is present
	p := payload(t, pushes[0])
	is.Equal(p.Kind, "test")
	err = e.TestNotification(e.ctx, e.sess, st.Device.ID)
	is.Equal(hub.KindOf(err), hub.RateLimited) // not twice in a row
	err = e.AcknowledgeNotification(e.ctx, e.sess, st.Device.ID, "0000000000000000000000000000000000000000000000000000000000000000")
	is.Equal(hub.MessageOf(err), "notification not found") // only what was sent is acknowledged
	is.NoErr(e.AcknowledgeNotification(e.ctx, e.sess, st.Device.ID, p.ID))
	got, err := e.Notifications(e.ctx, e.sess, st.Device.ID)
	is.NoErr(err)
	is.True(got.Device.LastAcknowledgedAt.Equal(e.clock.Now())) // Settings shows it
}

func TestAHeldCredentialUseIsANotificationThatOpensItsWorkspace(t *testing.T) {
	is := is.New(t)
	base := newEnv(t)
	app := base.register(base.repo("/home/ann/app"))
	tok := base.token("gh", "github.com", "ghp_push", hub.CapHTTPSGit)
	_, err := base.AssignCredential(base.ctx, tok.ID, hub.AssignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication,
		Host: "github.com", Policy: hub.PolicyAskEveryTime})
	is.NoErr(err) // every use asks
	base.start(app)
	sess, _ := base.login()
	base.clock.Advance(notify.RecentWindow)
	e := &pushEnv{env: base, app: app, sess: sess}
	ctx := e.wait()
	e.enroll(e.sess, endpoint)

	broker := e.backend.Spec(app).Credentials.Broker
	done := make(chan error, 1)
	go func() { _, _, err := broker.Token(e.ctx, "github.com"); done <- err }()
	ap := e.waitApproval()
	e.journaled(ctx, "credential-use:"+ap.ID, hub.DeliveryPending)
	e.clock.Advance(notify.Grace)
	pushes, err := e.pusher.Wait(ctx, 1)
	is.NoErr(err) // the owner is told
	p := payload(t, pushes[0])
	is.Equal(p.Kind, "credential-approval") // a use waits for approval
	is.Equal(p.URL, "/w/"+app)              // on the workspace's page, where it is approved
	is.NoErr(e.DecideCredentialApproval(e.ctx, e.ann, ap.ID, true))
	is.NoErr(<-done) // allowed

	go func() { _, _, err := broker.Token(e.ctx, "github.com"); done <- err }()
	ap = e.waitApproval()
	e.journaled(ctx, "credential-use:"+ap.ID, hub.DeliveryPending)
	is.NoErr(e.DecideCredentialApproval(e.ctx, e.ann, ap.ID, false)) // decided at once
	is.True(<-done != nil)                                           // denied
	e.journaled(ctx, "credential-use:"+ap.ID, hub.DeliveryDiscarded) // so nothing is sent
}

func TestTwoFirstEnrollmentsAtOnceBothAnswer(t *testing.T) {
	// Each enrollment waits for the feeds of its own workspaces; one must
	// not end the observer the other waits for (which made it wait out
	// its 3 s and answer 503).
	for round := range 10 {
		is := is.New(t)
		e := newPushEnv(t)
		ctx := e.wait()
		web := e.register(e.repo("/home/ann/web"))
		e.start(web)
		errs := make(chan error, 2)
		for i, ws := range []string{e.app, web} {
			go func() {
				_, err := e.EnrollNotifications(e.ctx, e.sess, raw(t, map[string]any{
					"subscription": subscription(t, endpoint+"-"+string(rune('a'+i))),
					"workspaceIds": []string{ws}, "needsAnswer": true, "completed": true}))
				errs <- err
			}()
		}
		for range 2 {
			select {
			case err := <-errs:
				is.NoErr(err) // both enrolled, in every round
			case <-ctx.Done():
				t.Fatalf("round %d: an enrollment did not answer", round)
			}
		}
	}
}
