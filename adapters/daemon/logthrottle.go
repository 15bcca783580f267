package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Clients decide how often some warnings are written: each failed TLS
// handshake, each live upstream that fails. Left alone, one client floods
// the log (an earlier run wrote 1,486 upstream warnings) and buries what
// matters. throttle lets through at most burst records of one kind per
// window, drops the rest, and says how many it dropped on the next record
// of that kind it lets through. A kind is the level and the first words
// of the message, which is where the variable parts (addresses, ids) are
// not. Records below Warn pass untouched.

const (
	throttleBurst  = 5
	throttleWindow = time.Minute
	throttleKinds  = 1024 // kinds remembered; past it, counting restarts
)

type throttle struct {
	slog.Handler
	st *throttleState
}

type throttleState struct {
	mu    sync.Mutex
	now   func() time.Time
	kinds map[string]*throttleKind
}

type throttleKind struct {
	start      time.Time
	written    int
	suppressed int
}

// newThrottle wraps h.
func newThrottle(h slog.Handler, now func() time.Time) slog.Handler {
	return throttle{Handler: h, st: &throttleState{now: now, kinds: map[string]*throttleKind{}}}
}

// kindOf is what makes two records the same kind.
func kindOf(r slog.Record) string {
	words := strings.Fields(r.Message)
	if len(words) > 4 {
		words = words[:4]
	}
	return r.Level.String() + " " + strings.Join(words, " ")
}

func (t throttle) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return t.Handler.Handle(ctx, r)
	}
	s := t.st
	now := s.now()
	s.mu.Lock()
	k := s.kinds[kindOf(r)]
	if k == nil {
		if len(s.kinds) >= throttleKinds {
			clear(s.kinds)
		}
		k = &throttleKind{start: now}
		s.kinds[kindOf(r)] = k
	}
	if now.Sub(k.start) >= throttleWindow {
		k.start, k.written = now, 0
	}
	if k.written >= throttleBurst {
		k.suppressed++
		s.mu.Unlock()
		return nil
	}
	k.written++
	dropped := k.suppressed
	k.suppressed = 0
	s.mu.Unlock()
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", dropped))
	}
	return t.Handler.Handle(ctx, r)
}

func (t throttle) WithAttrs(as []slog.Attr) slog.Handler {
	return throttle{Handler: t.Handler.WithAttrs(as), st: t.st}
}

func (t throttle) WithGroup(name string) slog.Handler {
	return throttle{Handler: t.Handler.WithGroup(name), st: t.st}
}
