package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestBudgetAndWindow(t *testing.T) {
	is := is.New(t)
	t0 := time.Unix(0, 0)
	l := New(2, time.Minute, 10)
	is.True(l.Reserve("k", t0))  // first attempt
	is.True(l.Reserve("k", t0))  // second attempt
	is.True(!l.Reserve("k", t0)) // in-flight attempts count against the budget
	l.Fail("k", t0)
	l.Succeed("k")
	is.True(l.Allowed("k", t0)) // a success forgets failures
	l.Fail("k", t0)
	l.Fail("k", t0.Add(30*time.Second))
	is.True(!l.Allowed("k", t0.Add(59*time.Second))) // two failures in the window
	is.True(l.Allowed("k", t0.Add(60*time.Second)))  // the oldest slides out
}

func TestMemoryBounded(t *testing.T) {
	is := is.New(t)
	t0 := time.Unix(0, 0)
	l := New(5, time.Minute, 100)
	for i := range 10_000 {
		k := fmt.Sprint(i)
		if l.Reserve(k, t0) {
			l.Fail(k, t0)
		}
	}
	is.True(l.Len() <= 100) // never more keys than MaxKeys
	for range 4 {
		is.True(l.Reserve("9999", t0)) // the newest key keeps its one failure...
		l.Fail("9999", t0)
	}
	is.True(!l.Allowed("9999", t0)) // ...so four more spend its budget
}
