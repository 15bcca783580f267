package sqlite_test

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// BenchmarkSessionLookup is the store's share of every authenticated
// request: one read unit of work that finds a session by its digest.
func BenchmarkSessionLookup(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "wharf.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	d := sha256.Sum256([]byte("session"))
	now := time.Now()
	err = s.Update(ctx, func(tx hub.Tx) error {
		if err := tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: now}); err != nil {
			return err
		}
		return tx.CreateDeviceSession(hub.DeviceSession{Digest: d, Handle: "h", User: "ann", IssuedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			err := s.View(ctx, func(tx hub.Tx) error {
				_, err := tx.DeviceSessionByDigest(d)
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}
