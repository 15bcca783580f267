package credential

import (
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/internal/ratelimit"
)

// Bucket names one rate limit of the credential operations (research
// §10): each counts every attempt of its operations per Hub user and
// client, allowed or failed, in a sliding window of RateWindow.
type Bucket int

// The buckets.
const (
	// BucketGenerate counts SSH and OpenPGP generate and import, together:
	// each makes the Hub derive a key-encryption key (bcrypt, S2K) or
	// generate a key, and import parses untrusted key material under such
	// a derivation. A person makes a few keys in a sitting; a script or a
	// stolen session could otherwise keep the Hub's CPU busy and fill its
	// catalog.
	BucketGenerate Bucket = iota
	// BucketPassphrase counts unlock and test, together: an unlock tries a
	// passphrase against a key the Hub holds, so without a bound the Hub
	// is an oracle for guessing it at the speed of its KDF; a test signs
	// with the key. Both speak of a key's secret, so one budget covers
	// them and a test cannot be used to spend around the unlock's.
	BucketPassphrase
)

// The budgets (research §10: the earlier system's, which the contract's
// 429s on generate/import/unlock/test stand for).
const (
	// GenerateBudget is the generate and import attempts a user may make
	// from one client per RateWindow: 5, enough to retry a mistyped import
	// a few times, never enough to make generation a load.
	GenerateBudget = 5
	// PassphraseBudget is the unlock and test attempts a user may make
	// from one client per RateWindow: 10 leaves room for typos across a
	// few keys and bounds guessing to 14,400 tries a day per user and
	// client, against passphrases the Hub makes slow to try.
	PassphraseBudget = 10
	// RateWindow is the sliding window both budgets are counted in.
	RateWindow = time.Minute
	// MaxRateKeys bounds the (user, client) pairs each bucket holds, so a
	// flood of clients costs bounded memory; a full table refuses a new
	// pair until one empties its window, and never forgets a pair that
	// still holds attempts (ratelimit.Config.MaxKeys).
	MaxRateKeys = 4096
	// maxKeyPart bounds each part of a key, for the same reason.
	maxKeyPart = 256
)

// RateLimitMessage is the refusal's message (research §10).
const RateLimitMessage = "too many credential operations; wait a minute and try again"

// Limits holds the buckets' counts. The zero value is not usable: use
// NewLimits. Safe for concurrent use.
type Limits struct {
	buckets [2]*ratelimit.Limiter
}

// NewLimits returns empty Limits.
func NewLimits() *Limits {
	l := &Limits{}
	for b, budget := range [...]int{BucketGenerate: GenerateBudget, BucketPassphrase: PassphraseBudget} {
		l.buckets[b] = ratelimit.New(ratelimit.Config{Budget: budget, Window: RateWindow, MaxKeys: MaxRateKeys})
	}
	return l
}

// Attempt counts one attempt of bucket b's operations by user from client
// (the transport's client key) at now, or refuses it, counting nothing:
// RateLimited with RateLimitMessage and, when known, how long until the
// oldest attempt leaves the window (hub.Details.RetryAfter; a transport
// sends it as Retry-After). The attempt counts whatever its outcome: the
// caller calls Attempt once, after reading the request and before
// validating it.
func (l *Limits) Attempt(b Bucket, user, client string, now time.Time) error {
	lim := l.buckets[b]
	key := cut(user) + "\x00" + cut(client)
	ok, wait := lim.Reserve(key, now)
	if !ok {
		if wait <= 0 {
			wait = RateWindow // the table is full: a window is as long as anything waits
		}
		return &hub.Error{Kind: hub.RateLimited, Message: RateLimitMessage, Details: &hub.Details{RetryAfter: wait}}
	}
	// Settle the reservation as a failure: the limiter then counts it in
	// the window whatever the operation's outcome (Succeed would forget
	// the key's count).
	lim.Fail(key, now)
	return nil
}

func cut(s string) string {
	if len(s) > maxKeyPart {
		return s[:maxKeyPart]
	}
	return s
}
