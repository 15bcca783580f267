package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// A flood of one kind of warning is cut to a burst per minute; the next
// one let through says how many were dropped; other kinds and lower
// levels pass untouched.
func TestThrottleRepeatedWarnings(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	log := slog.New(newThrottle(slog.NewTextHandler(&out, nil), func() time.Time { return now }))
	for i := range 100 {
		log.Warn("http: TLS handshake error from 10.0.0.1:"+strings.Repeat("1", i%5+1)+": EOF", "n", i)
	}
	log.Warn("live upstream failed", "topic", "document")
	log.Info("request", "n", 1)
	is.Equal(strings.Count(out.String(), "TLS handshake error"), throttleBurst) // a burst of one kind
	is.Equal(strings.Count(out.String(), "live upstream failed"), 1)            // another kind passes
	is.Equal(strings.Count(out.String(), "msg=request"), 1)                     // info passes
	is.True(!strings.Contains(out.String(), "suppressed"))                      // nothing said of the dropped yet

	now = now.Add(throttleWindow)
	log.Warn("http: TLS handshake error from 10.0.0.2:9: EOF")
	is.True(strings.Contains(out.String(), "suppressed=95")) // the next window says how many were dropped
}
