package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestBudgetAndWindow(t *testing.T) {
	is := is.New(t)
	l := New(Config{Budget: 2, Window: time.Minute, MaxKeys: 10})
	ok, _ := l.Reserve("k", t0)
	is.True(ok) // first attempt
	ok, _ = l.Reserve("k", t0)
	is.True(ok) // second attempt
	ok, wait := l.Reserve("k", t0)
	is.True(!ok)                     // in-flight attempts count against the budget
	is.Equal(wait, time.Duration(0)) // and how long they take is not known
	l.Fail("k", t0)
	l.Succeed("k")
	ok, _ = l.Check("k", t0)
	is.True(ok) // a success forgets failures
	for _, at := range []time.Time{t0, t0.Add(30 * time.Second)} {
		ok, _ = l.Reserve("k", at)
		is.True(ok) // a failure within the budget
		l.Fail("k", at)
	}
	ok, wait = l.Check("k", t0.Add(50*time.Second))
	is.True(!ok)                   // two failures in the window
	is.Equal(wait, 10*time.Second) // until the oldest leaves it
	ok, _ = l.Check("k", t0.Add(60*time.Second))
	is.True(ok) // the oldest slides out
}

func TestReleaseKeepsFailures(t *testing.T) {
	is := is.New(t)
	l := New(Config{Budget: 2, Window: time.Minute, MaxKeys: 10})
	l.Reserve("k", t0)
	l.Fail("k", t0)
	ok, _ := l.Reserve("k", t0)
	is.True(ok) // the second attempt
	l.Release("k")
	ok, _ = l.Reserve("k", t0)
	is.True(ok) // a released attempt is not a failure
	l.Release("k")
	is.Equal(l.Len(), 1) // and the failure stays
	l.Reserve("other", t0)
	l.Release("other")
	is.Equal(l.Len(), 1) // a key with nothing to remember is forgotten at once
}

func TestSlowDown(t *testing.T) {
	is := is.New(t)
	l := New(Config{Budget: 3, Window: 15 * time.Minute, MaxKeys: 10, Delay: time.Second, MaxDelay: 8 * time.Second})
	at := t0
	for range 3 {
		ok, _ := l.Reserve("ann", at)
		is.True(ok) // failures up to the threshold are not slowed
		l.Fail("ann", at)
	}
	for _, want := range []time.Duration{1, 2, 4, 8, 8, 8} {
		want *= time.Second
		ok, wait := l.Reserve("ann", at)
		is.True(!ok)         // too soon after the previous attempt
		is.Equal(wait, want) // the delay doubles up to its cap
		ok, wait = l.Reserve("ann", at.Add(want-time.Millisecond))
		is.True(!ok)                     // a moment before the delay has passed
		is.Equal(wait, time.Millisecond) // the wait left
		at = at.Add(want)
		ok, _ = l.Reserve("ann", at)
		is.True(ok) // once it has passed
		ok, wait = l.Reserve("ann", at)
		is.True(!ok)                 // an attempt in flight holds the slot
		is.True(wait >= time.Second) // until it settles and beyond
		l.Fail("ann", at)
	}
	ok, _ := l.Check("bob", at)
	is.True(ok) // other keys are not slowed
	ok, _ = l.Check("ann", at.Add(15*time.Minute))
	is.True(ok) // and failures leave the window
}

// TestFullTableRefusesNewKeys floods a table with junk keys: the real
// key's budget survives, the junk is refused once the table is full, and
// keys whose window is empty make room again.
func TestFullTableRefusesNewKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"budget", Config{Budget: 5, Window: time.Minute, MaxKeys: 100}},
		{"slow-down", Config{Budget: 5, Window: time.Minute, MaxKeys: 100, Delay: time.Second, MaxDelay: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			l := New(tc.cfg)
			for range 4 {
				l.Reserve("real", t0)
				l.Fail("real", t0)
			}
			refused := 0
			for i := range 10_000 {
				k := fmt.Sprint("junk", i)
				if ok, _ := l.Reserve(k, t0); ok {
					l.Fail(k, t0)
				} else {
					refused++
				}
			}
			is.Equal(l.Len(), 100)       // never more keys than MaxKeys
			is.Equal(refused, 10_000-99) // junk is refused once the table is full
			ok, _ := l.Reserve("real", t0)
			is.True(ok) // the real key keeps its four failures...
			l.Fail("real", t0)
			ok, _ = l.Check("real", t0)
			is.True(!ok) // ...so one more spends its budget
			ok, _ = l.Check("new", t0.Add(59*time.Second))
			is.True(!ok) // a new key waits while every key holds failures
			ok, _ = l.Reserve("new", t0.Add(time.Minute))
			is.True(ok)          // and gets in once they left the window
			is.Equal(l.Len(), 1) // the empty keys were dropped
		})
	}
}

// TestFullTableSweepsOnlyWhenUseful checks that a flood of new keys at a
// full table does not rescan it until a key can have emptied.
func TestFullTableSweepsOnlyWhenUseful(t *testing.T) {
	is := is.New(t)
	l := New(Config{Budget: 5, Window: time.Minute, MaxKeys: 2})
	l.Reserve("a", t0)
	l.Fail("a", t0)
	l.Reserve("b", t0.Add(10*time.Second))
	l.Fail("b", t0.Add(10*time.Second))
	ok, _ := l.Reserve("c", t0.Add(20*time.Second))
	is.True(!ok)                               // full
	is.Equal(l.nextSweep, t0.Add(time.Minute)) // nothing empties before a's failure leaves
	ok, _ = l.Reserve("c", t0.Add(time.Minute))
	is.True(ok) // a was dropped
	ok, _ = l.Reserve("d", t0.Add(time.Minute))
	is.True(!ok) // b still holds a failure, c is in flight
	l.Release("c")
	ok, _ = l.Reserve("d", t0.Add(time.Minute))
	is.True(ok) // c held nothing once released
}
