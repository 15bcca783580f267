// Package porttest holds one conformance suite per hub port. Each suite runs
// against the fake in package fakes and against the real adapter, which is
// what keeps the fakes honest.
package porttest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// Store runs the hub.Store contract against stores made by newStore, which
// must return an empty store; the suite closes it.
func Store(t *testing.T, newStore func(t *testing.T) hub.Store) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 123_456_789)
	open := func(t *testing.T) hub.Store {
		s := newStore(t)
		t.Cleanup(func() { s.Close() })
		return s
	}
	update := func(t *testing.T, s hub.Store, fn func(hub.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatalf("update: %v", err)
		}
	}
	user := func(name string) hub.User {
		return hub.User{Name: name, PasswordHash: "$argon2id$" + name, CreatedAt: t0}
	}
	session := func(user, handle string, issued time.Time) hub.DeviceSession {
		return hub.DeviceSession{Digest: sha256.Sum256([]byte(handle)), Handle: handle, User: user,
			DeviceLabel: "device " + handle, IssuedAt: issued, ExpiresAt: issued.Add(time.Hour)}
	}
	k := storeKit{ctx: ctx, t0: t0, open: open, update: update}

	t.Run("Users", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.CreateUser(user("zoe")))                            // create zoe
			is.NoErr(tx.CreateUser(user("adam")))                           // create adam
			is.Equal(hub.KindOf(tx.CreateUser(user("adam"))), hub.Conflict) // duplicate name
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			u, err := tx.User("adam")
			is.NoErr(err)                              // adam exists
			is.Equal(u.PasswordHash, "$argon2id$adam") // hash round-trips
			is.True(u.CreatedAt.Equal(t0))             // time round-trips to the nanosecond
			_, err = tx.User("eve")
			is.Equal(hub.KindOf(err), hub.NotFound) // unknown user
			us, err := tx.Users()
			is.NoErr(err)
			is.Equal(len(us), 2)                            // two users
			is.Equal(us[0].Name+","+us[1].Name, "adam,zoe") // sorted by name
			n, err := tx.CountUsers()
			is.NoErr(err)
			is.Equal(n, 2) // count
			return nil
		}))
		update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.SetPasswordHash("zoe", "new"))                         // set hash
			is.Equal(hub.KindOf(tx.SetPasswordHash("eve", "x")), hub.NotFound) // set hash of unknown user
			is.NoErr(tx.DeleteUser("adam"))                                    // delete
			is.Equal(hub.KindOf(tx.DeleteUser("adam")), hub.NotFound)          // delete twice
			u, err := tx.User("zoe")
			is.NoErr(err)
			is.Equal(u.PasswordHash, "new") // new hash visible in the same transaction
			return nil
		})
	})

	t.Run("Sessions", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		a := session("ann", "h-a", t0)
		b := session("ann", "h-b", t0.Add(time.Minute))
		c := session("bob", "h-c", t0)
		update(t, s, func(tx hub.Tx) error {
			is.Equal(hub.KindOf(tx.CreateDeviceSession(a)), hub.NotFound) // user must exist
			is.NoErr(tx.CreateUser(user("ann")))
			is.NoErr(tx.CreateUser(user("bob")))
			is.NoErr(tx.CreateDeviceSession(a))
			is.NoErr(tx.CreateDeviceSession(b))
			is.NoErr(tx.CreateDeviceSession(c))
			is.Equal(hub.KindOf(tx.CreateDeviceSession(a)), hub.Conflict) // duplicate digest
			dupHandle := session("ann", "h-x", t0)
			dupHandle.Handle = "h-a"
			is.Equal(hub.KindOf(tx.CreateDeviceSession(dupHandle)), hub.Conflict) // duplicate handle
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			got, err := tx.DeviceSessionByDigest(a.Digest)
			is.NoErr(err)
			is.Equal(got.Handle, a.Handle)                                              // handle round-trips
			is.Equal(got.User, "ann")                                                   // user round-trips
			is.Equal(got.DeviceLabel, a.DeviceLabel)                                    // label round-trips
			is.True(got.IssuedAt.Equal(a.IssuedAt) && got.ExpiresAt.Equal(a.ExpiresAt)) // times round-trip
			is.True(got.RevokedAt.IsZero())                                             // not revoked
			_, err = tx.DeviceSessionByDigest(sha256.Sum256([]byte("nope")))
			is.Equal(hub.KindOf(err), hub.NotFound) // unknown digest
			list, err := tx.DeviceSessionsOfUser("ann")
			is.NoErr(err)
			is.Equal(len(list), 2)                                 // ann's sessions only
			is.Equal(list[0].Handle+","+list[1].Handle, "h-b,h-a") // newest first
			active, err := tx.ActiveDeviceSessions(t0.Add(time.Hour))
			is.NoErr(err)
			is.Equal(len(active), 1)          // a and c expire exactly then
			is.Equal(active[0].Handle, "h-b") // b does not
			return nil
		}))
		update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.RevokeDeviceSession(a.Digest, t0.Add(time.Second)))
			is.NoErr(tx.RevokeDeviceSession(a.Digest, t0.Add(time.Hour)))                              // revoke twice
			is.Equal(hub.KindOf(tx.RevokeDeviceSession(sha256.Sum256([]byte("x")), t0)), hub.NotFound) // revoke unknown
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			got, err := tx.DeviceSessionByDigest(a.Digest)
			is.NoErr(err)
			is.True(got.RevokedAt.Equal(t0.Add(time.Second))) // the first revocation time is kept
			active, err := tx.ActiveDeviceSessions(t0)
			is.NoErr(err)
			handles := map[string]bool{}
			for _, s := range active {
				handles[s.Handle] = true
			}
			is.Equal(handles, map[string]bool{"h-b": true, "h-c": true}) // a revoked session is not active
			return nil
		}))
		update(t, s, func(tx hub.Tx) error {
			n, err := tx.DeleteExpiredDeviceSessions(t0.Add(time.Hour)) // a and c expire exactly now
			is.NoErr(err)
			is.Equal(n, 2) // expiry at now counts as expired
			n, err = tx.DeleteDeviceSessionsOfUser("ann")
			is.NoErr(err)
			is.Equal(n, 1) // b remained
			return nil
		})
	})

	t.Run("DeleteUserCascades", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		a := session("ann", "h-a", t0)
		update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.CreateUser(user("ann")))
			return tx.CreateDeviceSession(a)
		})
		update(t, s, func(tx hub.Tx) error { return tx.DeleteUser("ann") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			_, err := tx.DeviceSessionByDigest(a.Digest)
			is.Equal(hub.KindOf(err), hub.NotFound) // the user's sessions went with it
			return nil
		}))
	})

	t.Run("Rollback", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx hub.Tx) error {
			is.NoErr(tx.CreateUser(user("ann")))
			return boom
		})
		is.Equal(err, boom) // fn's error comes back unchanged
		func() {
			defer func() { is.True(recover() != nil) }() // the panic propagates
			s.Update(ctx, func(tx hub.Tx) error {
				tx.CreateUser(user("bob"))
				panic("boom")
			})
		}()
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			n, err := tx.CountUsers()
			is.NoErr(err)
			is.Equal(n, 0) // nothing of either failed update was kept
			return nil
		}))
	})

	// t.FailNow inside an Update's closure ends the goroutine with
	// runtime.Goexit: neither an error nor a panic. The store must still
	// end the transaction, or the next Update (and Close) wait for ever.
	t.Run("UpdateLeftByGoexitKeepsNothing", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		left := make(chan struct{})
		go func() {
			defer close(left)
			s.Update(ctx, func(tx hub.Tx) error {
				tx.CreateUser(user("ann"))
				runtime.Goexit()
				return nil
			})
		}()
		select {
		case <-left:
		case <-time.After(10 * time.Second):
			t.Fatal("the goroutine that left its Update did not end")
		}
		bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		is.NoErr(s.Update(bounded, func(tx hub.Tx) error { return tx.CreateUser(user("bob")) })) // the next update runs: nothing holds the store
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                             // the view succeeds
			us, err := tx.Users()
			is.NoErr(err)                                // list the users
			is.True(len(us) == 1 && us[0].Name == "bob") // ann's create was not kept
			return nil
		}))
	})

	t.Run("ViewIsReadOnly", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		err := s.View(ctx, func(tx hub.Tx) error { return tx.CreateUser(user("ann")) })
		is.True(err != nil) // a write inside View fails
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			n, err := tx.CountUsers()
			is.NoErr(err)
			is.Equal(n, 0) // and changed nothing
			return nil
		}))
	})

	t.Run("CancelledContext", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Update(cctx, func(tx hub.Tx) error { return tx.CreateUser(user("ann")) })
		is.True(err != nil) // a cancelled update fails
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			n, _ := tx.CountUsers()
			is.Equal(n, 0) // and commits nothing
			return nil
		}))
	})

	t.Run("ConcurrentUpdates", func(t *testing.T) {
		is := is.New(t)
		s := open(t)
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				errs <- s.Update(ctx, func(tx hub.Tx) error {
					c, err := tx.CountUsers()
					if err != nil {
						return err
					}
					return tx.CreateUser(user(fmt.Sprintf("u%02d-%d", i, c)))
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // no update fails for contention
		}
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			us, err := tx.Users()
			is.NoErr(err)
			is.Equal(len(us), n) // every update committed
			seen := map[string]bool{}
			for _, u := range us {
				var i, c int
				fmt.Sscanf(u.Name, "u%02d-%d", &i, &c)
				seen[fmt.Sprint(c)] = true
			}
			is.Equal(len(seen), n) // updates were serialized: each saw a distinct count
			return nil
		}))
	})

	storeWorkspaces(t, k)
	storeRecords(t, k)
	storeActivity(t, k)
	storeWorktrees(t, k)
	storeCredentials(t, k)
	storeCredentialAssignments(t, k)
	storeNotifications(t, k)
	storeHosts(t, k)
}
