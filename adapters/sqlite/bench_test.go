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
