package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
)

// A client that cancels a request, or drops its connection, ends the
// request's context; whatever the Hub was doing for it then fails with
// context.Canceled, possibly wrapped in a core error. That is the
// client's choice, not a fault an operator can act on, so it must never
// reach them as a WARN or an ERROR: they would learn to ignore those.
// The HTTP adapter's own error lines check for it where they log
// (httpapi's logFailure); the two filters here catch the rest: records
// of the core logged under a request's context, and net/http's own
// lines about connections.

// demoteCancelled logs at DEBUG a WARN or ERROR record that is about a
// cancellation: logged under a context that has ended, with an error
// attribute that is context.Canceled or wraps it. Both must hold, so a
// failure that merely coincides with a client leaving stays at its
// level.
type demoteCancelled struct{ slog.Handler }

func (h demoteCancelled) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && ctx != nil && ctx.Err() != nil && carriesCancel(r) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r = r.Clone()
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

// carriesCancel reports whether one of r's attributes is an error that
// is, or wraps, context.Canceled.
func carriesCancel(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Resolve().Any().(error); ok && errors.Is(err, context.Canceled) {
			found = true
		}
		return !found
	})
	return found
}

func (h demoteCancelled) WithAttrs(as []slog.Attr) slog.Handler {
	return demoteCancelled{h.Handler.WithAttrs(as)}
}

func (h demoteCancelled) WithGroup(name string) slog.Handler {
	return demoteCancelled{h.Handler.WithGroup(name)}
}

// serverLog is http.Server's ErrorLog. net/http logs there what goes
// wrong with a connection before or around a request (a failed TLS
// handshake, above all), as text without the error value. A line whose
// cause is the client going away (the connection closed, reset or timed
// out mid-handshake) is logged at DEBUG; any other (a client offering no
// common TLS version, a handler's misuse of the response) at WARN.
type serverLog struct{ log *slog.Logger }

// clientLeft are the words of the errors a client's leaving produces.
var clientLeft = []string{": EOF", "connection reset by peer", "broken pipe", "i/o timeout",
	"use of closed network connection", context.Canceled.Error()}

func (s serverLog) Write(b []byte) (int, error) {
	msg := strings.TrimSpace(string(b))
	level := slog.LevelWarn
	for _, w := range clientLeft {
		if strings.Contains(msg, w) {
			level = slog.LevelDebug
			break
		}
	}
	s.log.LogAttrs(context.Background(), level, "http server: "+strings.TrimPrefix(msg, "http: "))
	return len(b), nil
}
