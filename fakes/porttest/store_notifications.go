package porttest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// storeNotifications runs the subtests of the NotificationStore: the
// devices (storePushDevices), then the delivery journal, the feed
// cursors, the cascades, the refusals, rollback and View.
func storeNotifications(t *testing.T, k storeKit) {
	ctx := k.ctx
	storePushDevices(t, k)

	t.Run("PushDeliveries", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			return errors.Join(tx.PutPushDevice(k.pushDevice("a", "ann", 1)), tx.PutPushDevice(k.pushDevice("b", "bob", 2)))
		})
		late := k.delivery("w1", "a", notice("1"), 20)
		tie1, tie2, tie3 := k.delivery("w1", "a", notice("2"), 10), k.delivery("w2", "a", notice("2"), 10), k.delivery("w1", "b", notice("2"), 10)
		tie2.State, tie2.Notification.Kind = hub.DeliverySent, hub.NotifyTurnCompleted
		tie3.State, tie3.Notification.Kind = hub.DeliveryDiscarded, hub.NotifyPermissionPending
		fresh := hub.PushDelivery{Key: hub.PushDeliveryKey{WorkspaceID: "w2", DeviceID: "b", NotificationID: notice("3")},
			Notification: hub.Notification{ID: notice("3"), Kind: hub.NotifyTurnCompleted}, State: hub.DeliveryPending} // every time zero, never tried
		// Enough equal times that no store keeps them in put order by
		// chance (a small Go map iterates nearly in insertion order),
		// put in an order that is not their keys'.
		var crowd []hub.PushDelivery
		for i := range 12 {
			crowd = append(crowd, k.delivery([]string{"w2", "w1"}[i%2], []string{"b", "a", "a"}[i%3], notice(fmt.Sprint("c", 99-i)), 10))
		}
		renamed := k.delivery("w2", "b", notice("4"), 15)
		renamed.Notification.ID = notice("4 as the session told it") // not the key's: kept as given
		is.Equal(unsetIn(late), "")                                  // the suite sets every field of a delivery, so a new field must round-trip too
		k.update(t, s, func(tx hub.Tx) error {
			dls, err := tx.PushDeliveries()
			is.NoErr(err)         // list before any put
			is.Equal(len(dls), 0) // a new store has no deliveries
			for _, d := range slices.Concat([]hub.PushDelivery{late, tie1, tie2, tie3}, crowd, []hub.PushDelivery{fresh, renamed}) {
				is.NoErr(tx.PutPushDelivery(d)) // put
			}
			ghost := k.delivery("w1", "nope", notice("5"), 1)
			is.Equal(hub.KindOf(tx.PutPushDelivery(ghost)), hub.NotFound) // a delivery to an unknown device
			lost := k.delivery("w9", "a", notice("5"), 1)
			is.Equal(hub.KindOf(tx.PutPushDelivery(lost)), hub.NotFound) // a delivery in an unknown workspace
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			dls, err := tx.PushDeliveries()
			is.NoErr(err) // list
			// The zero time is the oldest; equal times keep the order
			// they were put in, whatever their keys.
			is.Equal(renderAll(dls), renderAll(slices.Concat([]hub.PushDelivery{fresh, tie1, tie2, tie3}, crowd, []hub.PushDelivery{renamed, late}))) // every field round-trips, the notification's bytes and times included
			return nil
		}))

		again, later, plain := tie1, tie2, renamed
		again.State, again.Attempts, again.SettledAt = hub.DeliverySent, 4, k.t0.Add(time.Hour)
		later.CreatedAt = k.t0.Add(30)
		plain.Notification.ID = plain.Key.NotificationID
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.PutPushDelivery(again)) // replace one, keeping its time
			is.NoErr(tx.PutPushDelivery(later)) // one with a later time
			is.NoErr(tx.PutPushDelivery(plain)) // and one whose notification is now the key's
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                                                                                                             // list
			is.Equal(renderAll(dls), renderAll(slices.Concat([]hub.PushDelivery{fresh, again, tie3}, crowd, []hub.PushDelivery{plain, late, later}))) // a replaced delivery keeps its place among equal times and moves with its time
			return nil
		}))
	})

	t.Run("DeletePushDelivery", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedNotifications(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                // list the seeded deliveries
			is.Equal(deliveryIDs(dls), seededDeliveries) // in the order they were put
			key := hub.PushDeliveryKey{WorkspaceID: "w2", DeviceID: "a1", NotificationID: notice("n")}
			is.NoErr(tx.DeletePushDelivery(key))                                                                        // delete one
			is.NoErr(tx.DeletePushDelivery(key))                                                                        // delete it again
			is.NoErr(tx.DeletePushDelivery(hub.PushDeliveryKey{WorkspaceID: "w2", DeviceID: "a1"}))                     // a key naming no notification
			is.NoErr(tx.DeletePushDelivery(hub.PushDeliveryKey{WorkspaceID: "w9", DeviceID: "x", NotificationID: "y"})) // nor anything else
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                                                    // list
			is.Equal(deliveryIDs(dls), strNotice("w1/a1/N,w1/a2/N,w2/a2/N,w1/b1/N,w2/b1/N")) // only that delivery went
			ds, err := tx.PushDevices()
			is.NoErr(err)                       // list the devices
			is.Equal(deviceIDs(ds), "a1,a2,b1") // untouched
			return nil
		}))
	})

	t.Run("NotificationCursors", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			cs, err := tx.NotificationCursors()
			is.NoErr(err)                                                             // list before any put
			is.Equal(len(cs), 0)                                                      // none yet
			is.NoErr(tx.PutNotificationCursor("w1", "4f1c:1"))                        // put
			is.NoErr(tx.PutNotificationCursor("w2", "4f1c:2"))                        // put another
			is.NoErr(tx.PutNotificationCursor("w1", "9a0e:\x00\xff\"17\""))           // replace one, with bytes a session may send
			is.Equal(hub.KindOf(tx.PutNotificationCursor("w9", "x:1")), hub.NotFound) // a cursor of an unknown workspace
			is.Equal(hub.KindOf(tx.PutNotificationCursor("w9", "")), hub.NotFound)    // removing one too
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			cs, err := tx.NotificationCursors()
			is.NoErr(err)                                                                // list
			is.Equal(cs, map[string]string{"w1": "9a0e:\x00\xff\"17\"", "w2": "4f1c:2"}) // byte for byte
			cs["w1"], cs["w3"] = "scribbled", "added"
			again, err := tx.NotificationCursors()
			is.NoErr(err)                                                                   // list again
			is.Equal(again, map[string]string{"w1": "9a0e:\x00\xff\"17\"", "w2": "4f1c:2"}) // the map was the caller's
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.PutNotificationCursor("w2", "")) // remove one
			is.NoErr(tx.PutNotificationCursor("w2", "")) // removing an absent one is no error
			cs, err := tx.NotificationCursors()
			is.NoErr(err)                                                // list
			is.Equal(cs, map[string]string{"w1": "9a0e:\x00\xff\"17\""}) // w2's is gone
			return nil
		})
	})

	t.Run("NotificationCascades", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedNotifications(t, s)
		var devices string
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { ds, err := tx.PushDevices(); devices = renderAll(ds); return err })) // read the devices
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteWorkspace("w2") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                                    // list the deliveries
			is.Equal(deliveryIDs(dls), strNotice("w1/a1/N,w1/a2/N,w1/b1/N")) // every device's deliveries in w2 went with it; w1's stay
			cs, err := tx.NotificationCursors()
			is.NoErr(err)                                      // list the cursors
			is.Equal(cs, map[string]string{"w1": "epoch-1:7"}) // and so did its cursor
			ds, err := tx.PushDevices()
			is.NoErr(err)                    // list the devices
			is.Equal(renderAll(ds), devices) // which keep their selection and cutoffs of w2: the Hub trims them
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteUser("ann") })
		k.update(t, s, func(tx hub.Tx) error { return tx.CreateUser(k.user("ann")) })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ds, err := tx.PushDevices()
			is.NoErr(err)                                                                      // list the devices
			is.Equal(renderAll(ds), renderAll([]hub.PushDevice{k.pushDevice("b1", "bob", 3)})) // ann's went with ann: a new ann starts with none; bob's stays
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                    // list the deliveries
			is.Equal(deliveryIDs(dls), strNotice("w1/b1/N")) // and the deliveries to them
			return nil
		}))
	})

	t.Run("UnnamedNotificationValuesAreRefused", func(t *testing.T) {
		s := k.open(t)
		k.seedNotifications(t, s)
		var before string
		is.New(t).NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = notificationState(tx); return err })) // read the seeded state
		device := func(change func(*hub.PushDevice)) func(hub.Tx) error {
			d := k.pushDevice("a1", "ann", 7) // a replacement, so a partial write would show
			change(&d)
			return func(tx hub.Tx) error { return tx.PutPushDevice(d) }
		}
		delivery := func(change func(*hub.PushDelivery)) func(hub.Tx) error {
			d := k.delivery("w1", "a1", notice("n"), 7)
			change(&d)
			return func(tx hub.Tx) error { return tx.PutPushDelivery(d) }
		}
		after2262 := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
		before1678 := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range []struct {
			name  string
			write func(hub.Tx) error
		}{
			{"UnknownCategory", device(func(d *hub.PushDevice) { d.Cutoffs[1].Category = "everything" })},
			{"EmptyCategory", device(func(d *hub.PushDevice) { d.Cutoffs[2].Category = "" })},
			{"UnknownState", delivery(func(d *hub.PushDelivery) { d.State = "lost" })},
			{"EmptyState", delivery(func(d *hub.PushDelivery) { d.State = "" })},
			{"UnknownKind", delivery(func(d *hub.PushDelivery) { d.Notification.Kind = "build-failed" })},
			{"EmptyKind", delivery(func(d *hub.PushDelivery) { d.Notification.Kind = "" })},
			{"DeviceTimeAfter2262", device(func(d *hub.PushDevice) { d.LastAckAt = after2262 })},
			{"CutoffTimeBefore1678", device(func(d *hub.PushDevice) { d.Cutoffs[0].Since = before1678 })},
			{"DeliveryTimeAfter2262", delivery(func(d *hub.PushDelivery) { d.Deadline = after2262 })},
			{"NotificationTimeBefore1678", delivery(func(d *hub.PushDelivery) { d.Notification.CreatedAt = before1678 })},
			{"UnknownCategoryOfAnUnknownUser", device(func(d *hub.PushDevice) { d.User, d.Cutoffs[0].Category = "eve", "all" })},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				k.update(t, s, func(tx hub.Tx) error {
					err := c.write(tx)
					is.True(err != nil)                     // the write is refused (KindOf(nil) is Internal too)
					is.Equal(hub.KindOf(err), hub.Internal) // as a bug, not stored as a guess
					return nil
				})
				is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
					after, err := notificationState(tx)
					is.NoErr(err)           // read the state
					is.Equal(after, before) // the refused write stored nothing
					return nil
				}))
			})
		}
	})

	t.Run("RollbackNotifications", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedNotifications(t, s)
		var before string
		is.NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = notificationState(tx); return err })) // read the seeded state
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx hub.Tx) error {
			is.NoErr(tx.PutPushDevice(k.pushDevice("a3", "ann", 4)))                                                             // add a device
			is.NoErr(tx.PutPushDevice(k.pushDevice("b1", "bob", 9)))                                                             // replace one
			_, err := tx.DeletePushDevice("a2")                                                                                  // delete one
			is.NoErr(err)                                                                                                        // with its deliveries
			is.NoErr(tx.PutPushDelivery(k.delivery("w1", "a3", notice("x"), 1)))                                                 // add a delivery
			is.NoErr(tx.PutPushDelivery(k.delivery("w2", "b1", notice("n"), 99)))                                                // replace one
			is.NoErr(tx.DeletePushDelivery(hub.PushDeliveryKey{WorkspaceID: "w1", DeviceID: "a1", NotificationID: notice("n")})) // delete one
			is.NoErr(tx.PutNotificationCursor("w1", "changed:1"))                                                                // replace a cursor
			is.NoErr(tx.PutNotificationCursor("w2", ""))                                                                         // remove one
			is.NoErr(tx.DeleteWorkspace("w1"))                                                                                   // cascade a workspace
			is.NoErr(tx.DeleteUser("bob"))                                                                                       // and a user
			return boom
		})
		is.Equal(err, boom)                          // fn's error comes back unchanged
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			after, err := notificationState(tx)
			is.NoErr(err)           // read the state
			is.Equal(after, before) // nothing of the failed update was kept
			return nil
		}))
	})

	t.Run("ViewIsReadOnlyNotifications", func(t *testing.T) {
		s := k.open(t)
		k.seedNotifications(t, s)
		var before string
		is.New(t).NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = notificationState(tx); return err })) // read the seeded state
		for _, c := range []struct {
			name  string
			write func(hub.Tx) error
		}{
			{"PutPushDevice", func(tx hub.Tx) error { return tx.PutPushDevice(k.pushDevice("a3", "ann", 4)) }},
			{"ReplacePushDevice", func(tx hub.Tx) error { return tx.PutPushDevice(k.pushDevice("a1", "ann", 9)) }},
			{"DeletePushDevice", func(tx hub.Tx) error { _, err := tx.DeletePushDevice("a1"); return err }},
			{"DeleteAbsentPushDevice", func(tx hub.Tx) error { _, err := tx.DeletePushDevice("nope"); return err }},
			{"PutPushDelivery", func(tx hub.Tx) error { return tx.PutPushDelivery(k.delivery("w1", "a1", notice("x"), 1)) }},
			{"DeletePushDelivery", func(tx hub.Tx) error {
				return tx.DeletePushDelivery(hub.PushDeliveryKey{WorkspaceID: "w1", DeviceID: "a1", NotificationID: notice("n")})
			}},
			{"DeleteAbsentPushDelivery", func(tx hub.Tx) error { return tx.DeletePushDelivery(hub.PushDeliveryKey{WorkspaceID: "w9"}) }},
			{"PutNotificationCursor", func(tx hub.Tx) error { return tx.PutNotificationCursor("w1", "changed:1") }},
			{"RemoveNotificationCursor", func(tx hub.Tx) error { return tx.PutNotificationCursor("w1", "") }},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				is.True(s.View(ctx, c.write) != nil) // a write inside View fails
			})
		}
		is := is.New(t)
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			after, err := notificationState(tx)
			is.NoErr(err)           // read the state
			is.Equal(after, before) // and changed nothing
			return nil
		}))
	})
}
