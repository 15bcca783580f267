package daemontest

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// pushCheck runs the push family's checks on a journal and a push
// service a test fills itself: one writer with two devices, and the
// real Web Push adapter playing the Hub.
type pushCheck struct {
	t      *testing.T
	f      *pushFamily
	w      *Writer
	db     *sql.DB
	pusher *webpush.Pusher
	subs   map[string]hub.PushSubscription // by device id
}

func newPushCheck(t *testing.T) *pushCheck {
	t.Helper()
	svc := pushservice.New(t, pushservice.Options{})
	pusher, err := webpush.New(webpush.Options{KeyFile: filepath.Join(t.TempDir(), "vapid"), Contact: "mailto:ops@example.com",
		Client: svc.Client()})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetVAPIDPublicKey(pusher.PublicKey())
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: filepath.Join(t.TempDir(), "wharf.db")}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The columns of the daemon's push_deliveries the family reads.
	if _, err := db.Exec(`CREATE TABLE push_deliveries (workspace_id TEXT, device_id TEXT, notification_id TEXT,
		state TEXT, deadline INTEGER, settled_at INTEGER)`); err != nil {
		t.Fatal(err)
	}
	f := &pushFamily{svc: svc, writers: map[*Writer]*pushWriter{}, settleWait: 200 * time.Millisecond}
	w := &Writer{Family: &Family{Name: "push"}, notes: &notes{n: map[string]int{}}}
	c := &pushCheck{t: t, f: f, w: w, db: db, pusher: pusher, subs: map[string]hub.PushSubscription{}}
	pw := f.writer(w)
	pw.ws = "w1"
	for _, dev := range []string{"d1", "d2"} {
		sub := svc.NewSubscription()
		c.subs[dev], pw.subs[dev] = sub, svc.ID(sub)
	}
	return c
}

// pushRow is a delivery of the test's journal.
type pushRow struct {
	device, notification, state string
	deadline, settled           int64 // 0: NULL
}

// journal makes the journal hold rows only, as a daemon left it.
func (c *pushCheck) journal(rows ...pushRow) {
	c.t.Helper()
	if _, err := c.db.Exec(`DELETE FROM push_deliveries`); err != nil {
		c.t.Fatal(err)
	}
	null := func(n int64) any {
		if n == 0 {
			return nil
		}
		return n
	}
	for _, r := range rows {
		if _, err := c.db.Exec(`INSERT INTO push_deliveries VALUES (?, ?, ?, ?, ?, ?)`, "w1", r.device, r.notification,
			r.state, null(r.deadline), null(r.settled)); err != nil {
			c.t.Fatal(err)
		}
	}
}

// push sends the message of the delivery of notification to device, as
// the Hub would.
func (c *pushCheck) push(device, notification string) {
	c.t.Helper()
	payload, err := json.Marshal(map[string]any{"version": 1, "id": pushPayloadID("w1", device, notification),
		"device": device, "kind": "turn-completed", "title": "w1", "body": "Agent turn finished", "url": "/w/w1",
		"createdAt": time.Now().UTC().Format(time.RFC3339Nano)})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.pusher.Push(c.t.Context(), c.subs[device], hub.PushMessage{Payload: payload, TTL: time.Minute, Urgency: "normal"}); err != nil {
		c.t.Fatal(err)
	}
}

// stopped runs the census check and returns what it found.
func (c *pushCheck) stopped() string {
	c.t.Helper()
	if err := c.f.stopped(context.Background(), c.w, c.db); err != nil {
		return err.Error()
	}
	return ""
}

// settle runs the end-of-run check and returns what it found.
func (c *pushCheck) settle() string {
	c.t.Helper()
	if err := c.f.settle(context.Background(), c.w); err != nil {
		return err.Error()
	}
	return ""
}

// TestThePushChecksFindWhatTheyClaimTo plays, for each rule of
// PushFamily, a daemon that breaks it and one that keeps it.
func TestThePushChecksFindWhatTheyClaimTo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// play acts out daemons and returns what the checks found, in
		// order ("" for nothing).
		play  func(c *pushCheck) []string
		found []string // substrings of what each check found; "" for nothing
		notes map[string]int
	}{
		{"ADeliveryJournaledAsSentThatNeverArrived", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "sent"})
			return []string{c.stopped()}
		}, []string{"journaled as sent, but the push service never received it"}, nil},
		{"ADeliveryReceivedAgainAfterItWasJournaledAsSent", func(c *pushCheck) []string {
			c.push("d1", "n1")
			c.journal(pushRow{device: "d1", notification: "n1", state: "sent"})
			first := c.stopped()
			c.push("d1", "n1")
			return []string{first, c.stopped()}
		}, []string{"", "again after it was journaled as sent"}, nil},
		{"ASendAKillCutOffAndTheNextDaemonRepeated", func(c *pushCheck) []string {
			c.push("d1", "n1") // its answer lost to the kill
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"})
			first := c.stopped()
			c.push("d1", "n1")
			c.journal(pushRow{device: "d1", notification: "n1", state: "sent"})
			return []string{first, c.stopped(), c.settle()}
		}, []string{"", "", ""}, map[string]int{
			"push: sends repeated, with the same payload id, after a kill cut their answer off": 1,
			"push: deliveries a daemon left journaled unsent that a later one sent":             1,
		}},
		{"TwoCopiesFromOneDaemon", func(c *pushCheck) []string {
			c.push("d1", "n1")
			c.push("d1", "n1")
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"})
			return []string{c.stopped()}
		}, []string{"received 2 times, more than the daemons that sent it (1)"}, nil},
		{"APushNoDeliveryOfTheJournalHas", func(c *pushCheck) []string {
			c.push("d2", "n9")
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"})
			return []string{c.stopped()}
		}, []string{"no delivery of the journal has it"}, nil},
		{"ADeliveryThatLeftTheJournal", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"})
			first := c.stopped()
			c.journal()
			return []string{first, c.stopped()}
		}, []string{"", "left the journal"}, nil},
		{"ADiscardWithNothingToCauseIt", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "discarded", deadline: 2000, settled: 1000})
			return []string{c.stopped()}
		}, []string{"discarded unsent before its send window ended"}, nil},
		{"ADeliveryWhoseWindowRanOut", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "discarded", deadline: 2000, settled: 2000})
			return []string{c.stopped(), c.settle()}
		}, []string{"", ""}, map[string]int{"push: deliveries whose send window ran out before a daemon lived to send them": 1}},
		{"AJournaledDeliveryThatNeverArrives", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"}, pushRow{device: "d2", notification: "n1", state: "held"})
			first := c.stopped()
			c.push("d2", "n1")
			return []string{first, c.settle()}
		}, []string{"", "1 journaled deliveries never reached the push service"}, nil},
		{"AJournaledDeliveryThatArrivesLate", func(c *pushCheck) []string {
			c.journal(pushRow{device: "d1", notification: "n1", state: "pending"})
			first := c.stopped()
			c.push("d1", "n1")
			return []string{first, c.settle()}
		}, []string{"", ""}, map[string]int{"push: deliveries a daemon left journaled unsent that a later one sent": 1}},
		{"APushTheServiceRefused", func(c *pushCheck) []string {
			c.f.svc.SetVAPIDPublicKey(nil) // no key verifies the Hub's tokens
			c.push("d1", "n1")
			return []string{c.settle()}
		}, []string{"the push service refused a push with 403"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := newPushCheck(t)
			got := tc.play(c)
			is.Equal(len(got), len(tc.found)) // one finding per check
			for i, want := range tc.found {
				if want == "" {
					is.Equal(got[i], "") // nothing found
				} else if !strings.Contains(got[i], want) {
					t.Errorf("check %d found %q, want %q", i, got[i], want)
				}
			}
			for k, n := range tc.notes {
				is.Equal(c.w.notes.n[k], n) // noted
			}
			if tc.notes == nil {
				is.Equal(len(c.w.notes.n), 0) // nothing noted
			}
		})
	}
}
