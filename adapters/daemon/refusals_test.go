package daemon

import (
	"net/netip"
	"testing"
	"time"

	"github.com/matryer/is"
)

// A refusal is logged when it begins an episode: not again while the
// count stays at the cap, and not within a minute of the address's last
// line even after the count fell and rose; that episode is logged once
// the minute has passed.
func TestACapRefusalIsLoggedOncePerEpisodeAndAtMostOnceAMinute(t *testing.T) {
	is := is.New(t)
	rl := newRefusalLog()
	key := netip.MustParsePrefix("127.0.0.1/32")
	other := netip.MustParsePrefix("192.0.2.1/32")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := 0
	line := func() { lines++ }
	for _, step := range []struct {
		name  string
		key   netip.Prefix
		at    time.Duration
		ended bool // the count fell below the cap before this refusal
		want  int
	}{
		{"the first refusal", key, 0, false, 1},
		{"the same episode", key, time.Second, false, 1},
		{"another address", other, time.Second, false, 2},
		{"a new episode within the minute", key, 10 * time.Second, true, 2},
		{"that episode once the minute has passed", key, 70 * time.Second, false, 3},
		{"the same episode", key, 71 * time.Second, false, 3},
	} {
		if step.ended {
			rl.end(step.key)
		}
		rl.begin(step.key, t0.Add(step.at), line)()
		if lines != step.want {
			t.Logf("after %s", step.name)
		}
		is.Equal(lines, step.want) // lines written after the step
	}
}
