package webpush

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 250_000_000, time.UTC)

func TestAnAnswersStatusIsItsOutcome(t *testing.T) {
	for _, c := range []struct {
		status int
		want   hub.PushOutcome // 0: an error
	}{
		{100, 0}, {199, 0},
		{200, hub.PushAccepted}, {201, hub.PushAccepted}, {204, hub.PushAccepted}, {299, hub.PushAccepted},
		{300, 0}, {301, 0}, {304, 0}, {308, 0}, {399, 0},
		{400, hub.PushRejected}, {401, hub.PushRejected}, {403, hub.PushRejected}, {413, hub.PushRejected}, {499, hub.PushRejected},
		{404, hub.PushGone}, {410, hub.PushGone},
		{429, hub.PushRetry}, {500, hub.PushRetry}, {502, hub.PushRetry}, {503, hub.PushRetry}, {599, hub.PushRetry},
		{600, 0}, {0, 0}, {-1, 0},
	} {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			is := is.New(t)
			res, err := classify(c.status, "7", now)
			if c.want == 0 {
				is.Equal(hub.KindOf(err), hub.Unavailable) // no outcome: an error
				is.Equal(res, hub.PushResult{})            // and nothing else
				return
			}
			is.NoErr(err)                 // an outcome
			is.Equal(res.Outcome, c.want) // this one
			is.Equal(res.Status, c.status)
			if c.want == hub.PushRetry {
				is.Equal(res.RetryAfter, 7*time.Second) // with its Retry-After
			} else {
				is.Equal(res.RetryAfter, time.Duration(0)) // which only a retry carries
			}
		})
	}
}

func TestRetryAfterIsSecondsOrADateCappedAt300s(t *testing.T) {
	date := func(d time.Duration) string { return now.Add(d).UTC().Format(http.TimeFormat) }
	for _, c := range []struct {
		name, value string
		want        time.Duration
	}{
		{"Absent", "", 0},
		{"Seconds", "120", 120 * time.Second},
		{"Zero", "0", 0},
		{"LeadingZeros", "000000000000000000000000000042", 42 * time.Second},
		{"WithSpaces", " \t7 ", 7 * time.Second},
		{"300", "300", 300 * time.Second},
		{"301IsCapped", "301", 300 * time.Second},
		{"AnOverflowIsCapped", "99999999999999999999999999", 300 * time.Second},
		{"ADateAhead", date(30 * time.Second), 30 * time.Second},
		{"ADateRoundedUpToTheSecond", date(10*time.Second - 250*time.Millisecond + 300*time.Millisecond), 10 * time.Second},
		{"ADateFarAheadIsCapped", date(48 * time.Hour), 300 * time.Second},
		{"ADatePast", date(-time.Hour), 0},
		{"ADateNow", now.Truncate(time.Second).Format(http.TimeFormat), 0},
		{"AnRFC850Date", now.Add(61 * time.Second).UTC().Format("Monday, 02-Jan-06 15:04:05 GMT"), 61 * time.Second},
		{"AnANSICDate", now.Add(5 * time.Second).UTC().Format(time.ANSIC), 5 * time.Second},
		{"Negative", "-5", 0},
		{"Signed", "+5", 0},
		{"Fractional", "1.5", 0},
		{"Words", "soon", 0},
		{"Hex", "0x10", 0},
		{"ADateWithGarbage", date(30*time.Second) + "x", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(parseRetryAfter(c.value, now), c.want) // read as the RFC says, within bounds
		})
	}
}
