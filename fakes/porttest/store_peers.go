package porttest

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// StorePeers runs the part of the hub.Store contract that needs two stores
// over the same records, as a daemon and `wharf user` have: openPair
// returns them; the suite closes both.
func StorePeers(t *testing.T, openPair func(t *testing.T) (a, b hub.Store)) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)

	t.Run("ExternalGeneration", func(t *testing.T) {
		is := is.New(t)
		a, b := openPair(t)
		t.Cleanup(func() { a.Close(); b.Close() })
		ga, gb := a.ExternalGeneration(), b.ExternalGeneration()
		is.Equal(a.ExternalGeneration(), ga) // unchanged while nothing commits

		is.NoErr(a.Update(ctx, func(tx hub.Tx) error {
			return tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: t0})
		}))
		is.Equal(a.ExternalGeneration(), ga) // a's own commit does not move a's generation
		gb2 := b.ExternalGeneration()
		is.True(gb2 != gb) // a's commit moved b's, by the time a's Update returned

		is.NoErr(b.View(ctx, func(tx hub.Tx) error {
			_, err := tx.User("ann")
			return err
		})) // and b reads what a committed

		is.True(a.Update(ctx, func(hub.Tx) error { return hub.Errorf(hub.Invalid, "no") }) != nil) // a rolled-back update
		is.NoErr(a.View(ctx, func(hub.Tx) error { return nil }))                                   // and a view
		is.Equal(b.ExternalGeneration(), gb2)                                                      // move nothing

		d := sha256.Sum256([]byte("s"))
		is.NoErr(b.Update(ctx, func(tx hub.Tx) error {
			return tx.CreateDeviceSession(hub.DeviceSession{Digest: d, Handle: "h", User: "ann", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		}))
		is.True(a.ExternalGeneration() != ga) // b's commit moves a's
		is.Equal(b.ExternalGeneration(), gb2) // and not b's own
	})
}
