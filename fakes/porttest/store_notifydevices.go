package porttest

import (
	"crypto/sha256"
	"math"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// storePushDevices runs the subtests of the enrolled devices;
// storeNotifications those of deliveries, cursors, cascades and refusals.
func storePushDevices(t *testing.T, k storeKit) {
	ctx := k.ctx

	t.Run("PushDevices", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		zeta, alpha, mid := k.pushDevice("zeta", "ann", 1), k.pushDevice("alpha", "bob", 2), k.pushDevice("mid", "ann", 3)
		mid.AllWorkspaces, mid.Completed, mid.WorkspaceIDs, mid.Cutoffs = false, false, nil, nil // none at all
		mid.LastSentAt, mid.LastAckAt = time.Time{}, time.Time{}                                 // never sent, never shown
		is.Equal(unsetIn(zeta), "")                                                              // the suite sets every field of a device, so a new field must round-trip too
		want := renderAll([]hub.PushDevice{zeta, alpha, mid})
		k.update(t, s, func(tx hub.Tx) error {
			ds, err := tx.PushDevices()
			is.NoErr(err)        // list before any put
			is.Equal(len(ds), 0) // a new store has no devices
			for _, d := range []hub.PushDevice{zeta, alpha, mid} {
				is.NoErr(tx.PutPushDevice(d)) // put
			}
			zeta.WorkspaceIDs[0], zeta.Cutoffs[0].WorkspaceID, zeta.Subscription[0] = "scribbled", "scribbled", 'X' // the caller reuses its slices
			ds, err = tx.PushDevices()
			is.NoErr(err)                             // list in the same transaction
			is.Equal(deviceIDs(ds), "zeta,alpha,mid") // puts are visible at once
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ds, err := tx.PushDevices()
			is.NoErr(err)                             // list
			is.Equal(deviceIDs(ds), "zeta,alpha,mid") // creation order, not id or user order
			is.Equal(renderAll(ds), want)             // every field round-trips: lists in order, digests, bytes, times to the nanosecond, zero times as zero
			ds[0].WorkspaceIDs[0], ds[0].Cutoffs[0].WorkspaceID, ds[0].Subscription[0] = "scribbled", "scribbled", 'X'
			again, err := tx.PushDevices()
			is.NoErr(err)                    // list again
			is.Equal(renderAll(again), want) // the listed devices were the caller's copies
			return nil
		}))
	})

	t.Run("ReplacePushDevice", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		a, b, c := k.pushDevice("a", "ann", 1), k.pushDevice("b", "ann", 2), k.pushDevice("c", "bob", 3)
		k.update(t, s, func(tx hub.Tx) error {
			for _, d := range []hub.PushDevice{a, b, c} {
				is.NoErr(tx.PutPushDevice(d)) // put
			}
			return nil
		})
		changed := k.pushDevice("other", "bob", 9) // every field differs
		changed.ID, changed.EndpointDigest = "a", a.EndpointDigest
		changed.WorkspaceIDs, changed.Cutoffs = []string{"w1"}, changed.Cutoffs[2:]
		shrunk := b
		shrunk.WorkspaceIDs, shrunk.Cutoffs, shrunk.AllWorkspaces = []string{}, []hub.PushCutoff{}, false
		shrunk.Subscription, shrunk.LastSentAt, shrunk.LastAckAt = nil, time.Time{}, time.Time{}
		moved := c
		moved.EndpointDigest = sha256.Sum256([]byte("https://updates.push.services.mozilla.com/wpush/v2/c"))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.PutPushDevice(changed)) // replace a, keeping its endpoint
			is.NoErr(tx.PutPushDevice(shrunk))  // replace b, emptying its lists and times
			is.NoErr(tx.PutPushDevice(moved))   // replace c, with a new endpoint
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ds, err := tx.PushDevices()
			is.NoErr(err)                                                                // list
			is.Equal(deviceIDs(ds), "a,b,c")                                             // replacing keeps a device's place
			is.Equal(renderAll(ds), renderAll([]hub.PushDevice{changed, shrunk, moved})) // and replaces every field
			return nil
		}))

		before := ""
		is.NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = notificationState(tx); return err })) // read the state
		k.update(t, s, func(tx hub.Tx) error {
			clash := k.pushDevice("d", "ann", 4)
			clash.EndpointDigest = moved.EndpointDigest
			is.Equal(hub.KindOf(tx.PutPushDevice(clash)), hub.Conflict) // a new device with an endpoint another holds
			steal := b
			steal.EndpointDigest = a.EndpointDigest
			is.Equal(hub.KindOf(tx.PutPushDevice(steal)), hub.Conflict) // a device taking another's endpoint
			orphan := k.pushDevice("e", "eve", 5)
			is.Equal(hub.KindOf(tx.PutPushDevice(orphan)), hub.NotFound) // a device of an unknown user
			stray := a
			stray.User = "eve"
			is.Equal(hub.KindOf(tx.PutPushDevice(stray)), hub.NotFound) // a replacement naming an unknown user
			after, err := notificationState(tx)
			is.NoErr(err)           // read the state again
			is.Equal(after, before) // the refused puts stored nothing
			return nil
		})
		k.update(t, s, func(tx hub.Tx) error {
			gone, err := tx.DeletePushDevice("c")
			is.NoErr(err) // delete c
			is.True(gone) // it was there
			again := k.pushDevice("d", "ann", 4)
			again.EndpointDigest = moved.EndpointDigest
			is.NoErr(tx.PutPushDevice(again)) // a deleted device's endpoint is free again
			ds, err := tx.PushDevices()
			is.NoErr(err)                    // list
			is.Equal(deviceIDs(ds), "a,b,d") // the new device comes last
			return nil
		})
	})

	t.Run("PushDeviceTimes", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		first, last := time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)
		d := k.pushDevice("d", "ann", 1)
		d.CreatedAt, d.LastSentAt, d.LastAckAt = time.Unix(0, 0), first, last // the epoch is a time, not "never"
		d.Cutoffs[0].Since, d.Cutoffs[1].Since = time.Time{}, time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
		d.Cutoffs[2].Since = time.Now() // with a monotonic reading, in the local zone
		want := render(d)
		k.update(t, s, func(tx hub.Tx) error { return tx.PutPushDevice(d) })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ds, err := tx.PushDevices()
			is.NoErr(err)                                                                // list
			is.Equal(len(ds), 1)                                                         // the device
			is.Equal(render(ds[0]), want)                                                // every time keeps its nanosecond, before 1970 too; zero stays zero
			is.True(ds[0].CreatedAt.Equal(time.Unix(0, 0)) && !ds[0].CreatedAt.IsZero()) // the epoch is not taken for zero
			return nil
		}))
	})

	t.Run("DeletePushDevice", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedNotifications(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			gone, err := tx.DeletePushDevice("a1")
			is.NoErr(err) // delete a1
			is.True(gone) // it was there
			gone, err = tx.DeletePushDevice("a1")
			is.NoErr(err)  // delete it again
			is.True(!gone) // it was not there any more
			gone, err = tx.DeletePushDevice("nope")
			is.NoErr(err)  // delete an unknown id
			is.True(!gone) // reported absent
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ds, err := tx.PushDevices()
			is.NoErr(err)                                                                                                    // list the devices
			is.Equal(deviceIDs(ds), "a2,b1")                                                                                 // a1 is gone, the others stay
			is.Equal(renderAll(ds), renderAll([]hub.PushDevice{k.pushDevice("a2", "ann", 2), k.pushDevice("b1", "bob", 3)})) // untouched
			dls, err := tx.PushDeliveries()
			is.NoErr(err)                                                            // list the deliveries
			is.Equal(deliveryIDs(dls), strNotice("w1/a2/N,w2/a2/N,w1/b1/N,w2/b1/N")) // a1's went with it, in both workspaces
			cs, err := tx.NotificationCursors()
			is.NoErr(err)        // list the cursors
			is.Equal(len(cs), 2) // untouched
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.PutPushDevice(k.pushDevice("a1", "ann", 1))) // enroll a1 again
			dls, err := tx.PushDeliveries()
			is.NoErr(err)         // list the deliveries
			is.Equal(len(dls), 4) // a new a1 starts with none
			return nil
		})
	})
}
