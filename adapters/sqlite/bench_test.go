package sqlite_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
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

// BenchmarkCredentialListing is the store's share of listing the
// credentials page with 50 credentials: one read unit of work that reads
// every credential, every assignment (two for each, over 10 workspaces)
// and the tools' overrides.
func BenchmarkCredentialListing(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "wharf.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	err = s.Update(ctx, func(tx hub.Tx) error {
		for w := range 10 {
			id := fmt.Sprintf("w%02d", w)
			if err := tx.CreateWorkspace(hub.Workspace{ID: id, Path: "/srv/" + id, Backend: "local", RegisteredAt: now}); err != nil {
				return err
			}
		}
		for i := range 50 {
			id, ws := fmt.Sprintf("c%02d", i), fmt.Sprintf("w%02d", i%10)
			c := hub.Credential{ID: id, Name: "key " + id, Type: hub.CredentialSSH, Enabled: true, CreatedAt: now,
				Capabilities: []hub.Capability{hub.CapSSHAuthentication, hub.CapSSHSigning},
				PublicKey:    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + id, Fingerprint: "SHA256:" + id, Protected: true}
			if err := errors.Join(tx.CreateCredential(c, make([]byte, 512)),
				tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: ws, CredentialID: id, Role: hub.RoleAuthentication, Host: id + ".example", Policy: hub.PolicyAlways}),
				tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: ws, CredentialID: id, Role: hub.RoleSigning, Policy: hub.PolicyAlways})); err != nil {
				return err
			}
		}
		return tx.PutCredentialToolOverride(hub.ToolGit, "/opt/git/bin/git")
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		err := s.View(ctx, func(tx hub.Tx) error {
			cs, err1 := tx.Credentials()
			as, err2 := tx.CredentialAssignments()
			_, err3 := tx.CredentialToolOverrides()
			if len(cs) != 50 || len(as) != 60 {
				return fmt.Errorf("read %d credentials and %d assignments", len(cs), len(as))
			}
			return errors.Join(err1, err2, err3)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// pushBench opens a store holding one user, devices devices of hers that
// each select and cut off every one of workspaces workspaces in both
// categories (the enrollment limits: 32 devices, 256 workspaces), and
// deliveries deliveries spread over them (the journal holds 10,000).
func pushBench(b *testing.B, devices, workspaces, deliveries int) *sqlite.Store {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "wharf.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	now := time.Now()
	err = s.Update(context.Background(), func(tx hub.Tx) error {
		errs := []error{tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: now})}
		var ids []string
		var cuts []hub.PushCutoff
		for w := range workspaces {
			id := fmt.Sprintf("w%03d", w)
			ids = append(ids, id)
			cuts = append(cuts, hub.PushCutoff{WorkspaceID: id, Category: hub.CategoryNeedsAnswer, Since: now},
				hub.PushCutoff{WorkspaceID: id, Category: hub.CategoryCompleted, Since: now})
			errs = append(errs, tx.CreateWorkspace(hub.Workspace{ID: id, Path: "/srv/" + id, Backend: "local", RegisteredAt: now}))
		}
		for d := range devices {
			id := fmt.Sprintf("d%02d", d)
			errs = append(errs, tx.PutPushDevice(hub.PushDevice{ID: id, User: "ann", Subscription: make([]byte, 300),
				EndpointDigest: sha256.Sum256([]byte(id)), WorkspaceIDs: ids, NeedsAnswer: true, Completed: true,
				Cutoffs: cuts, CreatedAt: now}))
		}
		for i := range deliveries {
			n := fmt.Sprintf(`["codex","agent:c%d","turn-completed","turn-%d"]`, i, i)
			errs = append(errs, tx.PutPushDelivery(hub.PushDelivery{
				Key:          hub.PushDeliveryKey{WorkspaceID: ids[i%workspaces], DeviceID: fmt.Sprintf("d%02d", i%devices), NotificationID: n},
				Notification: hub.Notification{ID: n, ConversationID: "agent:c", SourceID: "turn", Kind: hub.NotifyTurnCompleted, CreatedAt: now},
				State:        hub.DeliverySent, CreatedAt: now.Add(time.Duration(i)), SettledAt: now, Attempts: 1}))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPushDeviceUpdate is the store's share of a send: one write
// unit of work that stores a device with the largest selection again, its
// LastSentAt moved.
func BenchmarkPushDeviceUpdate(b *testing.B) {
	s := pushBench(b, 1, 256, 0)
	ctx := context.Background()
	var d hub.PushDevice
	if err := s.View(ctx, func(tx hub.Tx) error { ds, err := tx.PushDevices(); d = ds[0]; return err }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d.LastSentAt = time.Now()
		if err := s.Update(ctx, func(tx hub.Tx) error { return tx.PutPushDevice(d) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPushDeliveryUpdate is the store's share of settling one
// delivery in a full journal.
func BenchmarkPushDeliveryUpdate(b *testing.B) {
	s := pushBench(b, 32, 10, 10_000)
	ctx := context.Background()
	var d hub.PushDelivery
	if err := s.View(ctx, func(tx hub.Tx) error { dls, err := tx.PushDeliveries(); d = dls[5_000]; return err }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d.Attempts++
		if err := s.Update(ctx, func(tx hub.Tx) error { return tx.PutPushDelivery(d) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPushLoad is what the Hub reads of the family when it starts:
// 32 devices selecting 256 workspaces each and a full journal.
func BenchmarkPushLoad(b *testing.B) {
	s := pushBench(b, 32, 256, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		err := s.View(ctx, func(tx hub.Tx) error {
			ds, err1 := tx.PushDevices()
			dls, err2 := tx.PushDeliveries()
			_, err3 := tx.NotificationCursors()
			if len(ds) != 32 || len(dls) != 10_000 || len(ds[31].Cutoffs) != 512 {
				return fmt.Errorf("read %d devices and %d deliveries", len(ds), len(dls))
			}
			return errors.Join(err1, err2, err3)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
