package live

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Timings of upstreams (the earlier system's, which clients are tuned to).
const (
	// upstreamRetryMin and upstreamRetryMax bound the backoff between
	// attempts to reopen a failed upstream; it doubles from the first to
	// the second and resets once an attempt succeeds.
	upstreamRetryMin = time.Second
	upstreamRetryMax = 15 * time.Second
	// upstreamLinger is how long an upstream outlives its last subscriber,
	// so a reload or a quick A→B→A navigation reuses it.
	upstreamLinger = 3 * time.Second
	// upstreamOpenTimeout bounds one attempt to open a feed.
	upstreamOpenTimeout = 10 * time.Second
)

// upKey names an upstream: one per workspace, topic and key (a document
// context in canonical form, a conversation id, or "").
type upKey struct {
	ws    string
	topic hub.Topic
	key   string
}

type upState int

const (
	upOpening upState = iota // an attempt is under way
	upLive                   // frames flow
	upFailed                 // the last attempt failed; a retry may be scheduled
	upClosed                 // released; never used again
)

// upstream is one feed of a workspace session shared by every subscriber
// of the same upKey. All fields are guarded by Broker.mu.
type upstream struct {
	b     *Broker
	k     upKey
	codec feedCodec // what is particular to the topic
	subs  map[*attachment]struct{}
	state upState
	// gen counts attempts; frames and failures of an earlier attempt are
	// ignored, so a late reader cannot disturb its successor.
	gen    uint64
	feed   hub.Feed
	cancel context.CancelFunc

	// epoch and seq make the Hub's cursors (document, inventory):
	// "<epoch>.<seq>", a new epoch on every open, so a cursor from an
	// earlier open or Hub lifetime is never mistaken for the head.
	epoch string
	seq   uint64
	head  string // the current cursor; for a conversation the session's

	delay   time.Duration // of the next retry
	lastTry time.Time
	retry   hub.Timer
	linger  hub.Timer
	logged  bool // this failure episode has been logged
}

// upstreamFor returns the upstream of k, creating it with t's codec if
// there is none. b.mu is held.
func (b *Broker) upstreamFor(k upKey, t *feedTopic) *upstream {
	if u := b.ups[k]; u != nil {
		if u.linger != nil {
			u.linger.Stop()
			u.linger = nil
		}
		return u
	}
	u := &upstream{b: b, k: k, codec: t.newCodec(), subs: map[*attachment]struct{}{}, delay: upstreamRetryMin, state: upFailed}
	if b.ups == nil {
		b.ups = map[upKey]*upstream{}
	}
	b.ups[k] = u
	return u
}

// newEpoch returns 8 random base-36 characters.
func newEpoch() string {
	var b [8]byte
	rand.Read(b[:])
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b[:])
}

// newEpoch starts the Hub-made cursors of a topic that has them over: a
// new epoch at every open, so a cursor from an earlier open or Hub
// lifetime is never mistaken for the head.
func (u *upstream) newEpoch() {
	u.epoch, u.seq = newEpoch(), 0
	u.head = u.epoch + ".0"
}

// advance moves the head of a Hub-made cursor and returns it.
func (u *upstream) advance() string {
	u.seq++
	u.head = u.epoch + "." + strconv.FormatUint(u.seq, 10)
	return u.head
}

// openLocked starts an attempt to open u. A workspace whose session is not
// running fails at once, and is retried when the session starts rather
// than on a timer. b.mu is held.
func (b *Broker) openLocked(u *upstream) {
	b.stopRetryLocked(u)
	u.gen++
	gen := u.gen
	u.state = upOpening
	u.lastTry = b.clock.Now()
	req := u.codec.begin(u)
	rs := b.host.WorkspaceSession(u.k.ws)
	if rs == nil || b.closed {
		b.failLocked(u, gen, hub.Errorf(hub.Unavailable, "the workspace is not running"))
		return
	}
	ctx, cancel := context.WithCancel(b.bg)
	u.cancel = cancel
	b.wg.Add(1)
	go b.run(u, gen, rs, ctx, req)
}

// run opens the feed of attempt gen and relays its frames until it ends or
// the attempt is superseded.
func (b *Broker) run(u *upstream, gen uint64, rs hub.WorkspaceSession, ctx context.Context, req hub.FeedRequest) {
	defer b.wg.Done()
	octx, cancel := context.WithTimeout(ctx, upstreamOpenTimeout)
	feed, err := rs.OpenFeed(octx, req)
	cancel()
	b.mu.Lock()
	if err != nil {
		if r, ok := u.codec.(feedRefuser); ok && hub.KindOf(err) == hub.NotFound && u.gen == gen && u.state != upClosed {
			r.refused(u)
		} else {
			b.failLocked(u, gen, err)
		}
		b.settleLocked()
		b.mu.Unlock()
		return
	}
	if u.gen != gen {
		b.mu.Unlock()
		feed.Close()
		return
	}
	u.feed = feed
	if u.codec.liveOnAccept() {
		b.liveLocked(u)
	}
	b.settleLocked()
	b.mu.Unlock()
	defer feed.Close()
	for {
		fr, err := feed.Next(ctx)
		if err == nil {
			err = normalizeFrame(&fr)
		}
		b.mu.Lock()
		if u.gen != gen {
			b.mu.Unlock()
			return
		}
		if err != nil {
			b.failLocked(u, gen, err)
		} else {
			u.codec.frame(u, fr)
		}
		b.settleLocked()
		b.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// endAttemptLocked supersedes the current attempt: its feed is closed and
// its reader stops. b.mu is held.
func (u *upstream) endAttemptLocked() {
	u.gen++
	if u.cancel != nil {
		u.cancel()
		u.cancel = nil
	}
	if u.feed != nil {
		u.feed.Close()
		u.feed = nil
	}
}

// failLocked records that attempt gen failed: every subscriber not yet told
// in this episode gets `unavailable`, everyone waits for the recovery, and
// a retry is scheduled while subscribers remain and the session runs.
// b.mu is held.
func (b *Broker) failLocked(u *upstream, gen uint64, err error) {
	if u.gen != gen || u.state == upClosed {
		return
	}
	u.endAttemptLocked()
	u.state = upFailed
	if !u.logged {
		u.logged = true
		// Never the workspace id, key or cursor: those are the user's.
		b.log.LogAttrs(context.Background(), slog.LevelWarn, "live upstream failed",
			slog.String("topic", string(u.k.topic)), slog.String("kind", hub.KindOf(err).String()))
	}
	// The retry is armed before anyone is told, so its delay counts from
	// the failure: a subscriber that has read `unavailable` knows the
	// retry is already on the clock.
	b.scheduleRetryLocked(u)
	for a := range u.subs {
		b.tellUnavailableLocked(u, a)
	}
}

// tellUnavailableLocked sends a its episode's one `unavailable` and makes
// it wait for the recovery. b.mu is held.
func (b *Broker) tellUnavailableLocked(u *upstream, a *attachment) {
	b.stopCatchUpLocked(a) // the recovery joins it again
	a.pending = true
	if a.told {
		return
	}
	a.told = true
	cur := u.head
	if cur == "" {
		cur = a.cursor
	}
	b.deliverLocked(a, a.envelope(hub.EventUnavailable, cur, nil))
}

// scheduleRetryLocked arms the retry of a failed u, when anyone still
// follows it and its session runs; the start of the session retries at
// once otherwise. b.mu is held.
func (b *Broker) scheduleRetryLocked(u *upstream) {
	b.stopRetryLocked(u)
	if len(u.subs) == 0 || b.closed || b.host.WorkspaceSession(u.k.ws) == nil {
		return
	}
	d := u.delay
	u.delay = min(2*u.delay, upstreamRetryMax)
	b.retryAfterLocked(u, d)
}

// retryAfterLocked arms u's retry d from now, replacing an armed one.
// b.mu is held.
func (b *Broker) retryAfterLocked(u *upstream, d time.Duration) {
	b.stopRetryLocked(u)
	u.retry = b.clock.AfterFunc(d, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if u.state == upFailed && len(u.subs) > 0 {
			b.openLocked(u)
			b.settleLocked()
		}
	})
}

func (b *Broker) stopRetryLocked(u *upstream) {
	if u.retry != nil {
		u.retry.Stop()
		u.retry = nil
	}
}

// joinFailedLocked handles a subscriber joining a failed upstream: it is
// told `unavailable` at once, and the retry is pulled forward to one
// second after the last attempt (joiners within that second share it).
// b.mu is held.
func (b *Broker) joinFailedLocked(u *upstream, a *attachment) {
	b.tellUnavailableLocked(u, a)
	if b.host.WorkspaceSession(u.k.ws) == nil {
		return
	}
	wait := u.lastTry.Add(upstreamRetryMin).Sub(b.clock.Now())
	if u.lastTry.IsZero() || wait <= 0 {
		b.openLocked(u)
		return
	}
	b.retryAfterLocked(u, wait)
}

// liveLocked marks u live and attaches every subscriber waiting for it,
// each getting what it is owed and then `ready`. b.mu is held.
func (b *Broker) liveLocked(u *upstream) {
	u.state = upLive
	u.delay = upstreamRetryMin
	u.logged = false
	for a := range u.subs {
		if a.pending {
			b.joinLiveLocked(u, a)
		}
	}
}

// unfollowLocked takes a out of its upstream; the last one out starts the
// linger, after which the upstream is released. b.mu is held.
func (b *Broker) unfollowLocked(a *attachment) {
	b.stopCatchUpLocked(a)
	u := a.up
	if u == nil {
		return
	}
	a.up = nil
	delete(u.subs, a)
	if len(u.subs) > 0 || u.state == upClosed {
		return
	}
	b.stopRetryLocked(u)
	if u.linger != nil {
		u.linger.Stop()
	}
	u.linger = b.clock.AfterFunc(upstreamLinger, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(u.subs) == 0 && u.state != upClosed {
			b.closeUpstreamLocked(u)
		}
	})
}

// closeUpstreamLocked releases u for good. b.mu is held.
func (b *Broker) closeUpstreamLocked(u *upstream) {
	u.endAttemptLocked()
	u.state = upClosed
	b.stopRetryLocked(u)
	if u.linger != nil {
		u.linger.Stop()
		u.linger = nil
	}
	if b.ups[u.k] == u {
		delete(b.ups, u.k)
	}
}

// normalizeFrame checks that a frame's payload is JSON and makes it one
// line: streams splice payloads into SSE `data:` lines, where a newline
// would end the event. The check runs outside the broker's lock.
func normalizeFrame(fr *hub.FeedFrame) error {
	if fr.Data == nil {
		if fr.Kind == hub.FrameData {
			return hub.Errorf(hub.Unavailable, "the session sent a frame without data")
		}
		return nil
	}
	if !json.Valid(fr.Data) {
		return hub.Errorf(hub.Unavailable, "the session sent a frame that is not JSON")
	}
	if bytes.ContainsAny(fr.Data, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, fr.Data); err != nil {
			return hub.Errorf(hub.Unavailable, "the session sent a frame that is not JSON")
		}
		fr.Data = buf.Bytes()
	}
	return nil
}
