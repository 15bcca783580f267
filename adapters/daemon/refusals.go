package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"
)

// A connection refused by a cap is closed before anything is read from
// it, so its client learns nothing, and the operator must: the usual
// cause is not an attack but a reverse proxy on this machine that the Hub
// was not told about, through which every client shares one address. One
// line per episode says so and names the setting that lifts the cap. An
// episode of an address begins with a refusal and ends once its count is
// below the cap again; the next episode of the same address is logged
// only a minute or more after the previous line, so a count that hovers
// at the cap (a proxy under load) writes a line a minute, not one per
// connection.

// refusalInterval is the least time between two lines about one address.
const refusalInterval = time.Minute

// refusalMemory bounds the addresses whose last line is remembered; past
// it the lines older than refusalInterval are forgotten, and if that is
// not enough, all of them (an address may then be logged again early).
const refusalMemory = 1024

// totalKey stands for the cap on all connections.
var totalKey = netip.Prefix{}

// refusalLog is the episodes' state; connLimiter.mu guards it.
type refusalLog struct {
	ongoing map[netip.Prefix]bool      // an episode was logged and has not ended
	last    map[netip.Prefix]time.Time // when each address's last line was written
}

func newRefusalLog() refusalLog {
	return refusalLog{ongoing: map[netip.Prefix]bool{}, last: map[netip.Prefix]time.Time{}}
}

// begin records a refusal for key at now and returns what to call, once
// outside the lock: line when the refusal is to be logged, a no-op
// otherwise.
func (rl *refusalLog) begin(key netip.Prefix, now time.Time, line func()) func() {
	if rl.ongoing[key] {
		return func() {}
	}
	if t, ok := rl.last[key]; ok && now.Sub(t) < refusalInterval {
		return func() {}
	}
	if len(rl.last) >= refusalMemory {
		for k, t := range rl.last {
			if now.Sub(t) >= refusalInterval {
				delete(rl.last, k)
			}
		}
		if len(rl.last) >= refusalMemory {
			clear(rl.last)
		}
	}
	rl.ongoing[key] = true
	rl.last[key] = now
	return line
}

// end ends key's episode: its count is below its cap again.
func (rl *refusalLog) end(key netip.Prefix) { delete(rl.ongoing, key) }

func (l *connLimiter) logClientRefusal(key netip.Prefix) {
	addr := key.Addr().String()
	if key.Addr().Is6() {
		addr = key.String()
	}
	hint := "if that address is a reverse proxy, set --public-url and --trusted-proxies to it"
	if key.Addr().IsLoopback() {
		hint = "behind a reverse proxy on this machine, set --public-url"
	}
	l.log.LogAttrs(context.Background(), slog.LevelWarn,
		fmt.Sprintf("connection cap reached: connections from %s refused: %d per client; %s", addr, l.perClient, hint),
		slog.String("client", addr), slog.Int("cap", l.perClient))
}

func (l *connLimiter) logTotalRefusal() {
	l.log.LogAttrs(context.Background(), slog.LevelWarn,
		fmt.Sprintf("connection cap reached: connections refused: %d at once in all; the cap is the lower of %d and half "+
			"the process's descriptor limit (raise it: ulimit -n, systemd's LimitNOFILE)", l.max, DefaultMaxConns),
		slog.Int("cap", l.max))
}
