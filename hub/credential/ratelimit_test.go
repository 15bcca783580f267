package credential_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// TestEveryCredentialAttemptCountsInASlidingMinute drives both buckets
// through hub/internal/ratelimit: the budget within 60 s, a refusal with
// the wait until the oldest attempt leaves, and room again as each
// attempt slides out, per user and client.
func TestEveryCredentialAttemptCountsInASlidingMinute(t *testing.T) {
	for _, tc := range []struct {
		row    string
		bucket credential.Bucket
		budget int
	}{
		{"generate and import: 5 a minute", credential.BucketGenerate, 5},
		{"unlock and test: 10 a minute", credential.BucketPassphrase, 10},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			l := credential.NewLimits()
			t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
			at := func(i int) time.Time { return t0.Add(time.Duration(i) * 5 * time.Second) } // one attempt every 5 s
			for i := range tc.budget {
				is.NoErr(l.Attempt(tc.bucket, "ada", "192.0.2.1", at(i))) // within the budget
			}
			n := tc.budget
			err := l.Attempt(tc.bucket, "ada", "192.0.2.1", at(n))
			is.Equal(hub.KindOf(err), hub.RateLimited)                                                  // one more is refused
			is.Equal(hub.MessageOf(err), "too many credential operations; wait a minute and try again") // with the earlier system's message
			is.Equal(hub.RetryAfter(err), t0.Add(time.Minute).Sub(at(n)))                               // until the first attempt leaves the window

			is.NoErr(l.Attempt(tc.bucket, "ada", "192.0.2.2", at(n)))   // another client of the same user has its own budget
			is.NoErr(l.Attempt(tc.bucket, "grace", "192.0.2.1", at(n))) // another user on the same client too
			other := credential.BucketGenerate
			if tc.bucket == other {
				other = credential.BucketPassphrase
			}
			is.NoErr(l.Attempt(other, "ada", "192.0.2.1", at(n))) // and the other bucket

			slid := t0.Add(time.Minute)
			is.NoErr(l.Attempt(tc.bucket, "ada", "192.0.2.1", slid)) // the first attempt has left: one more
			err = l.Attempt(tc.bucket, "ada", "192.0.2.1", slid)
			is.Equal(hub.KindOf(err), hub.RateLimited)                      // and only one: the window slides, it does not reset
			is.Equal(hub.RetryAfter(err), at(1).Add(time.Minute).Sub(slid)) // until the second leaves
		})
	}
}

// TestARefusedAttemptDoesNotCount: waiting out the window is enough,
// however often a client was refused meanwhile.
func TestARefusedAttemptDoesNotCount(t *testing.T) {
	is := is.New(t)
	l := credential.NewLimits()
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for range credential.GenerateBudget {
		is.NoErr(l.Attempt(credential.BucketGenerate, "ada", "c", t0)) // the budget, at once
	}
	for i := range 50 {
		is.True(l.Attempt(credential.BucketGenerate, "ada", "c", t0.Add(time.Duration(i)*time.Second)) != nil) // refused while it lasts
	}
	is.NoErr(l.Attempt(credential.BucketGenerate, "ada", "c", t0.Add(time.Minute))) // allowed once the window has passed
}
