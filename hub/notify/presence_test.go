package notify_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/notify"
)

// Presence (research §2.4, §7.5): present while a live stream has the
// workspace open, recent for 30 s after the last one leaves and after the
// Hub starts, away otherwise.

func TestEveryoneIsRecentForThirtySecondsAfterTheHubStarts(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0)
	p, until := s.At("ada", "ws-a", t0)
	is.Equal(p, notify.Recent)                   // recent at start
	is.Equal(until, t0.Add(notify.RecentWindow)) // until the window ends
	p, _ = s.At("ada", "ws-a", t0.Add(notify.RecentWindow-time.Nanosecond))
	is.Equal(p, notify.Recent) // still, a moment before
	p, until = s.At("ada", "ws-a", t0.Add(notify.RecentWindow))
	is.Equal(p, notify.Away)                      // away from then on
	is.True(until.IsZero())                       // for good, as far as time goes
	is.Equal(notify.RecentWindow, 30*time.Second) // research's 30 s
}

func TestAUserIsPresentWhileAnyOfTheirStreamsIsOpenAndRecentAfterTheLastLeaves(t *testing.T) {
	is := is.New(t)
	start := t0.Add(time.Hour) // long after the start window
	s := notify.NewPresences(t0)
	is.True(s.Arrive("ada", "ws-a"))  // the first stream makes her present
	is.True(!s.Arrive("ada", "ws-a")) // a second one does not again
	p, until := s.At("ada", "ws-a", start)
	is.Equal(p, notify.Present) // present
	is.True(until.IsZero())     // for as long as a stream stays

	is.True(!s.Leave("ada", "ws-a", start)) // one stream left, another stays
	p, _ = s.At("ada", "ws-a", start.Add(time.Hour))
	is.Equal(p, notify.Present) // still present

	left := start.Add(2 * time.Hour)
	is.True(s.Leave("ada", "ws-a", left)) // the last one leaves
	p, until = s.At("ada", "ws-a", left)
	is.Equal(p, notify.Recent)                     // recent
	is.Equal(until, left.Add(notify.RecentWindow)) // for 30 s
	p, _ = s.At("ada", "ws-a", left.Add(notify.RecentWindow-time.Nanosecond))
	is.Equal(p, notify.Recent) // a moment before the end still
	p, _ = s.At("ada", "ws-a", left.Add(notify.RecentWindow))
	is.Equal(p, notify.Away) // then away
	p, _ = s.At("ada", "ws-a", left.Add(time.Hour))
	is.Equal(p, notify.Away) // and stays away
}

func TestComingBackWithinTheRecentWindowIsPresentAndLeavingAgainStartsANewWindow(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0)
	at := t0.Add(time.Hour)
	s.Arrive("ada", "ws-a")
	s.Leave("ada", "ws-a", at)
	is.True(s.Arrive("ada", "ws-a")) // back within the window: present again
	p, _ := s.At("ada", "ws-a", at.Add(time.Second))
	is.Equal(p, notify.Present) // present
	s.Leave("ada", "ws-a", at.Add(10*time.Second))
	p, until := s.At("ada", "ws-a", at.Add(35*time.Second))
	is.Equal(p, notify.Recent)                                  // recent from the second departure
	is.Equal(until, at.Add(10*time.Second+notify.RecentWindow)) // until 30 s after it
}

func TestLeavingDuringTheStartWindowEndsWhicheverWindowIsLater(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0)
	s.Arrive("ada", "ws-a")
	s.Leave("ada", "ws-a", t0.Add(10*time.Second))
	p, until := s.At("ada", "ws-a", t0.Add(time.Second*20))
	is.Equal(p, notify.Recent)              // recent
	is.Equal(until, t0.Add(40*time.Second)) // until 30 s after leaving, past the start window
	s.Arrive("bob", "ws-a")
	s.Leave("bob", "ws-a", t0.Add(-10*time.Second)) // a clock that stepped back
	_, until = s.At("bob", "ws-a", t0)
	is.Equal(until, t0.Add(notify.RecentWindow)) // the start window still holds
}

func TestPresenceIsPerUserAndWorkspace(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0)
	at := t0.Add(time.Hour)
	s.Arrive("ada", "ws-a")
	for _, tc := range []struct{ user, ws string }{{"ada", "ws-b"}, {"bob", "ws-a"}, {"bob", "ws-b"}} {
		p, _ := s.At(tc.user, tc.ws, at)
		is.Equal(p, notify.Away) // someone else, or elsewhere, is away
	}
	p, _ := s.At("ada", "ws-a", at)
	is.Equal(p, notify.Present) // only ada on ws-a is present
}

func TestALeaveWithoutAnArrivalChangesNothing(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0)
	at := t0.Add(time.Hour)
	is.True(!s.Leave("ada", "ws-a", at)) // nobody was there
	p, _ := s.At("ada", "ws-a", at)
	is.Equal(p, notify.Away) // so nobody is recent
	s.Arrive("ada", "ws-a")
	s.Leave("ada", "ws-a", at)
	is.True(!s.Leave("ada", "ws-a", at.Add(time.Minute))) // an extra leave
	is.True(s.Arrive("ada", "ws-a"))                      // does not make the count negative
	p, _ = s.At("ada", "ws-a", at.Add(time.Hour))
	is.Equal(p, notify.Present) // one arrival is presence again
}

func TestPresencesReadAsWords(t *testing.T) {
	is := is.New(t)
	is.Equal(notify.Away.String(), "away")               // away
	is.Equal(notify.Recent.String(), "recent")           // recent
	is.Equal(notify.Present.String(), "present")         // present
	is.Equal(notify.Presence(0).String(), "Presence(?)") // the zero value is none of them
}

// TestAFinishedTurnOfARecentUserIsSentOnceTheWindowEnds joins presence
// and Step: a recent user turns away by time alone, at the time At gives.
func TestAFinishedTurnOfARecentUserIsSentOnceTheWindowEnds(t *testing.T) {
	is := is.New(t)
	s := notify.NewPresences(t0.Add(-time.Hour))
	s.Arrive("ada", "ws-a")
	s.Leave("ada", "ws-a", t0)
	d := journaled("turn-completed")
	p, until := s.At("ada", "ws-a", t0)
	dec := notify.Step(d, p, t0)
	is.Equal(dec.Action, notify.Wait) // recent: wait
	is.True(until.Before(dec.Wake))   // the presence changes before the step's wake
	p, _ = s.At("ada", "ws-a", until)
	dec = notify.Step(dec.Delivery, p, until)
	is.Equal(dec.Action, notify.Send) // away at the end of the window: sent
}
