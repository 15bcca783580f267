package child

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// The grace runs exactly while neither stdin nor a hold keeps the child,
// and the child is gone when a whole grace passes so.
func TestTheGraceRunsOnlyWhileNoHubHoldsTheChild(t *testing.T) {
	is := is.New(t)
	p := newPresence(nil, time.Minute)
	var fire func()
	armed := 0
	p.after = func(d time.Duration, f func()) func() bool {
		is.Equal(d, time.Minute) // the child's grace
		armed++
		fire = f
		n := armed
		return func() bool {
			if armed == n {
				fire = nil
			}
			return true
		}
	}
	running := func() bool { return p.timer != nil }
	step := func(f func()) {
		p.mu.Lock()
		f()
		p.decide()
		p.mu.Unlock()
	}
	step(func() { p.holds++ })
	is.True(!running()) // stdin and a hold: held
	step(func() { p.stdinOpen = false })
	is.True(!running()) // the hold alone: held
	step(func() { p.holds-- })
	is.True(running()) // nobody: the grace runs
	is.Equal(armed, 1)
	step(func() { p.holds++ })
	is.True(!running())  // a Hub adopts it in time: the grace stops
	is.True(fire == nil) // and cannot fire
	step(func() { p.holds-- })
	is.True(running()) // that Hub leaves: a new grace
	is.Equal(armed, 2)
	select {
	case <-p.gone:
		t.Fatal("gone before the grace passed")
	default:
	}
	fire()
	<-p.gone // a whole grace with nobody: gone
	step(func() { p.holds++ })
	is.Equal(armed, 2) // nothing more is decided once gone
}
