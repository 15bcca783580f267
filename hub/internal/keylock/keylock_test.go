package keylock_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/internal/keylock"
)

func TestLockExcludesSameKeyOnly(t *testing.T) {
	is := is.New(t)
	var l keylock.Locks
	ctx := context.Background()
	unlockA, err := l.Lock(ctx, "a")
	is.NoErr(err) // lock a
	unlockB, err := l.Lock(ctx, "b")
	is.NoErr(err) // b is independent of a
	unlockB()

	got := make(chan func())
	go func() {
		u, err := l.Lock(ctx, "a")
		if err == nil {
			got <- u
		}
	}()
	select {
	case <-got:
		t.Fatal("a was locked twice")
	default:
	}
	unlockA()
	unlockA() // a second unlock is harmless
	select {
	case u := <-got:
		u()
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never got a")
	}
}

func TestLockHonoursContext(t *testing.T) {
	is := is.New(t)
	var l keylock.Locks
	unlock, err := l.Lock(context.Background(), "a")
	is.NoErr(err) // lock a
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.Lock(ctx, "a")
	is.Equal(err, context.Canceled) // a cancelled wait gives up
	unlock()
	u, err := l.Lock(context.Background(), "a")
	is.NoErr(err) // the abandoned wait left nothing behind
	u()
}

func TestLockAllSortsAndDeduplicates(t *testing.T) {
	is := is.New(t)
	var l keylock.Locks
	unlock, err := l.LockAll(context.Background(), []string{"b", "a", "b"})
	is.NoErr(err) // duplicates are locked once
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.LockAll(ctx, []string{"c", "a"})
	is.Equal(err, context.Canceled) // a held key fails the whole set
	u, err := l.Lock(context.Background(), "c")
	is.NoErr(err) // and the failed set released c
	u()
	unlock()
}
