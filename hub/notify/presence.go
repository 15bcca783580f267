package notify

import "time"

// Presence is whether a user is looking at a workspace, as the Hub sees
// it: the user's live stream has that workspace open (present), did
// until a moment ago or the Hub just started (recent), or not (away).
// The service worker never decides it: it shows whatever arrives.
type Presence int

// The presences.
const (
	Away Presence = iota + 1
	Recent
	Present
)

// RecentWindow is how long a user stays recent after leaving a
// workspace, and everyone is after the Hub starts (a page reconnecting
// after a restart is not a departure).
const RecentWindow = 30 * time.Second

func (p Presence) String() string {
	switch p {
	case Away:
		return "away"
	case Recent:
		return "recent"
	case Present:
		return "present"
	}
	return "Presence(?)"
}

// Presences counts, per user and workspace, the live streams open on the
// workspace, and remembers when the last one left. It is not safe for
// concurrent use: its owner locks.
type Presences struct {
	started time.Time
	open    map[presenceKey]int
	left    map[presenceKey]time.Time
}

type presenceKey struct{ user, ws string }

// NewPresences returns an empty set for a Hub started at started.
func NewPresences(started time.Time) *Presences {
	return &Presences{started: started, open: map[presenceKey]int{}, left: map[presenceKey]time.Time{}}
}

// Arrive counts one more stream of user on ws; it reports whether the
// user just became present.
func (s *Presences) Arrive(user, ws string) bool {
	k := presenceKey{user, ws}
	s.open[k]++
	delete(s.left, k)
	return s.open[k] == 1
}

// Leave counts one stream fewer at now; it reports whether the user just
// stopped being present (the recent window starts).
func (s *Presences) Leave(user, ws string, now time.Time) bool {
	k := presenceKey{user, ws}
	if s.open[k] == 0 {
		return false
	}
	s.open[k]--
	if s.open[k] > 0 {
		return false
	}
	delete(s.open, k)
	s.left[k] = now
	return true
}

// At returns user's presence on ws at now, and until when it stays so
// when it will change by time alone (a recent user becoming away).
func (s *Presences) At(user, ws string, now time.Time) (Presence, time.Time) {
	k := presenceKey{user, ws}
	if s.open[k] > 0 {
		return Present, time.Time{}
	}
	until := s.started.Add(RecentWindow)
	if t, ok := s.left[k]; ok && t.Add(RecentWindow).After(until) {
		until = t.Add(RecentWindow)
	}
	if now.Before(until) {
		return Recent, until
	}
	delete(s.left, k)
	return Away, time.Time{}
}
