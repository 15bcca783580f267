package webpush

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// maxRetryAfter caps how long a push service may ask to be left alone.
const maxRetryAfter = 300 * time.Second

// classify reads a push service's answer: its status and Retry-After
// header, at now. A 2xx is accepted, 404 and 410 gone, 429 and 5xx to be
// retried (no sooner than the Retry-After it gave, capped at 5 min), any
// other 4xx rejected. Anything else — a redirect not followed, an
// informational or out-of-range status — says nothing of the message's
// fate and is an error, never an outcome.
func classify(status int, retryAfter string, now time.Time) (hub.PushResult, error) {
	res := hub.PushResult{Status: status}
	switch {
	case status >= 200 && status <= 299:
		res.Outcome = hub.PushAccepted
	case status == http.StatusNotFound || status == http.StatusGone:
		res.Outcome = hub.PushGone
	case status == http.StatusTooManyRequests || status >= 500 && status <= 599:
		res.Outcome = hub.PushRetry
		res.RetryAfter = parseRetryAfter(retryAfter, now)
	case status >= 400 && status <= 499:
		res.Outcome = hub.PushRejected
	case status >= 300 && status <= 399:
		return hub.PushResult{}, hub.Errorf(hub.Unavailable,
			"the push service answered with a redirect (%d), which is not followed", status)
	default:
		return hub.PushResult{}, hub.Errorf(hub.Unavailable,
			"the push service answered with an unexpected status (%d)", status)
	}
	return res, nil
}

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number
// of seconds or an HTTP date, which counts from now and is rounded up to
// whole seconds. The result is within [0, maxRetryAfter]; a value that is
// neither, or a date already past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.Trim(v, " \t")
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter // only an overlong number of seconds fails
		}
		return time.Duration(n) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := at.Sub(now)
	if d <= 0 {
		return 0
	}
	if d >= maxRetryAfter {
		return maxRetryAfter
	}
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}
