package live

import (
	"context"
	"log/slog"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// Broker owns the live streams and who follows what. Its methods are safe
// for concurrent use; New makes one, Close and then Wait end it.
//
// Lock order: marksMu, then Broker.mu, then a Stream's mu. Joining a
// topic (queueing what the subscriber is owed, then registering it) and
// publishing to it both happen under Broker.mu, so a subscriber never
// misses nor doubles an event published while it joins.
type Broker struct {
	host   Host
	clock  hub.Clock
	log    *slog.Logger
	limits Limits
	topics []topic // the one table (newTopics); fixed after New
	// presence is Config.Presence, or a no-op.
	presence func(user, ws string, open bool)
	// observed is Config.Observed, or a no-op.
	observed func(ws string, rs hub.WorkspaceSession, o hub.Observation)
	// shellsMoved is Config.ShellsMoved, or a no-op.
	shellsMoved func(ws string, rs hub.WorkspaceSession)
	// bg is the context of the broker's background work (upstream feeds,
	// catch-ups, activity watches); Wait cancels it and waits for them.
	bg     context.Context
	stopBG context.CancelFunc

	mu      sync.Mutex
	streams map[string]*Stream
	ups     map[upKey]*upstream
	closed  bool

	// Activity: the marks behind `finished` and the Hub's own watch of
	// every running session (cancelled when it ends). marksMu is taken
	// before mu and held while a change of marks is persisted, so the
	// store sees them in the order they were made.
	marksMu sync.Mutex
	marks   *activityMarks
	watches map[string]context.CancelFunc
	// dropping lists streams that must end, found while b.mu was held in the
	// middle of a fan-out; settleLocked ends them once it is safe.
	dropping []*Stream
	wg       sync.WaitGroup // the background work: upstream readers, catch-ups, activity watches
}

// Config tunes a broker.
type Config struct {
	// Clock is the Hub's: keepalives, stalls, retries and lingers run on
	// it. Required.
	Clock hub.Clock
	// Logger receives the broker's warnings; default discards them.
	Logger *slog.Logger
	// Limits bound the streams and upstreams; a zero field takes its
	// default.
	Limits Limits
	// Presence, when set, is told of every stream that opens (open true)
	// and of its end (open false), with the stream's user and workspace:
	// who is looking at which workspace, which push notifications heed.
	// It is called with the broker's lock held, so it must return at once
	// and never call the broker.
	Presence func(user, ws string, open bool)
	// Observed, when set, is told of every observation the Hub makes of a
	// running workspace session's activity (activitywatch.go): the
	// workspace, the session observed and what was seen. Calls come in
	// the order the observations were made, never with the broker's lock
	// held (its marks lock is, which orders them), so it must return at
	// once and never call the broker.
	Observed func(ws string, rs hub.WorkspaceSession, o hub.Observation)
	// ShellsMoved, when set, is told when a running session's activity
	// frames say its shells changed: the frame's shells revision moved,
	// or was first seen by the Hub's watch of that session (the facts
	// the Hub holds may be older). Frames without a revision (an older
	// child) tell it nothing. It is called from the watch, with no lock
	// of the broker's held, and must return at once and never call the
	// broker.
	ShellsMoved func(ws string, rs hub.WorkspaceSession)
}

// New returns a broker over host, which it reaches for nothing else. A
// missing Clock or host is a programming error, and panics.
func New(cfg Config, host Host) *Broker {
	if cfg.Clock == nil || host == nil {
		panic("live.New: a Clock and a Host are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Broker{host: host, clock: cfg.Clock, log: cfg.Logger, limits: cfg.Limits.withDefaults(),
		marks: newActivityMarks(), presence: cfg.Presence, observed: cfg.Observed, shellsMoved: cfg.ShellsMoved}
	if b.presence == nil {
		b.presence = func(string, string, bool) {}
	}
	if b.observed == nil {
		b.observed = func(string, hub.WorkspaceSession, hub.Observation) {}
	}
	if b.shellsMoved == nil {
		b.shellsMoved = func(string, hub.WorkspaceSession) {}
	}
	b.topics = newTopics(b)
	b.bg, b.stopBG = context.WithCancel(context.Background())
	return b
}

// activity returns the activity topic, which the Hub's own observations
// of the sessions feed.
func (b *Broker) activity() *activityTopic { return b.topic(hub.TopicActivity).(*activityTopic) }

// Open opens a live stream for caller on workspace ws with the
// subscriptions subs (checked, de-duplicated with the last entry winning).
// activity turns the activity topic on. An unknown workspace is NotFound
// ("unknown workspace"); an invalid subscription is Invalid; a stream or
// subscriptions over the Limits are RateLimited.
func (b *Broker) Open(ctx context.Context, caller hub.DeviceSession, ws string, activity bool, subs []hub.Subscription) (*Stream, error) {
	if err := hub.CheckLiveWorkspaceID(ws, true); err != nil {
		return nil, err
	}
	subs, err := b.normalizeSubs(subs)
	if err != nil {
		return nil, err
	}
	registered, err := b.host.Registered(ctx, ws)
	if err != nil {
		return nil, err
	}
	if !registered {
		return nil, hub.Errorf(hub.NotFound, "unknown workspace")
	}
	s := newStream(b, caller, ws)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, hub.Errorf(hub.Unavailable, "the Hub is shutting down")
	}
	if err := b.admitStreamLocked(caller); err != nil {
		return nil, err
	}
	if err := b.admitUpstreamsLocked(ws, subs); err != nil {
		return nil, err
	}
	if b.streams == nil {
		b.streams = map[string]*Stream{}
	}
	b.streams[s.id] = s
	b.presence(s.user, s.ws, true)
	for _, sub := range subs {
		b.attachLocked(s, sub)
	}
	if activity {
		// After the subscriptions, as clients expect.
		b.attachLocked(s, hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicActivity}})
	}
	b.settleLocked()
	return s, nil
}

// UpdateSubscriptions changes the subscriptions of the caller's stream
// streamID: removals first, then additions, an addition of a subscribed
// topic and key replacing it from the new cursor. Once it returns, no
// envelope of a removed or replaced subscription is written any more.
func (b *Broker) UpdateSubscriptions(ctx context.Context, caller hub.DeviceSession, streamID string, change hub.SubscriptionChange) error {
	if len(change.Add) > hub.MaxLiveSubscriptions || len(change.Remove) > hub.MaxLiveSubscriptions {
		return hub.Errorf(hub.Invalid, "too many subscriptions")
	}
	for _, sub := range change.Add {
		if err := b.CheckSubscription(sub); err != nil {
			return err
		}
	}
	for _, k := range change.Remove {
		if err := b.checkSubKey(k); err != nil {
			return err
		}
	}
	b.mu.Lock()
	s := b.streams[streamID]
	if s == nil {
		b.mu.Unlock()
		return hub.Errorf(hub.NotFound, "unknown stream")
	}
	if s.owner != caller.Digest {
		b.mu.Unlock()
		return hub.Errorf(hub.Forbidden, "stream belongs to another session")
	}
	s.mu.Lock()
	ended := s.ended
	after := map[hub.SubKey]bool{}
	for id := range s.subs {
		if subscribable(id.Topic) { // activity does not count
			after[id] = true
		}
	}
	s.mu.Unlock()
	if ended {
		b.mu.Unlock()
		return hub.Errorf(hub.NotFound, "unknown stream")
	}
	for _, k := range change.Remove {
		delete(after, b.identity(k))
	}
	for _, sub := range change.Add {
		after[b.identity(sub.SubKey)] = true
	}
	if len(after) > hub.MaxLiveSubscriptions {
		b.mu.Unlock()
		return hub.Errorf(hub.Invalid, "too many subscriptions")
	}
	if err := b.admitUpstreamsLocked(s.ws, change.Add); err != nil {
		b.mu.Unlock()
		return err
	}
	for _, k := range change.Remove {
		b.detachLocked(s, b.identity(k))
	}
	for _, sub := range change.Add {
		b.detachLocked(s, b.identity(sub.SubKey))
		b.attachLocked(s, sub)
	}
	b.settleLocked()
	b.mu.Unlock()
	// A batch taken before the change may hold envelopes of what was
	// removed: wait until it is written, so none arrives after we answer.
	// A stream whose writer is stuck is ended instead: "unknown stream"
	// tells the client to reconnect, which it would have to anyway.
	if !s.waitWriter(ctx) {
		if err := ctx.Err(); err != nil {
			return hub.Wrap(hub.Unavailable, err, "request cancelled")
		}
		return hub.Errorf(hub.NotFound, "unknown stream")
	}
	return nil
}

// attachLocked subscribes s to sub through sub's topic (see
// topic.attachLocked). A stream that overflows while being owed its
// replay is ended at the next settleLocked.
func (b *Broker) attachLocked(s *Stream, sub hub.Subscription) {
	a := &attachment{s: s, sub: sub, cursor: sub.Cursor, topic: b.topic(sub.Topic)}
	s.mu.Lock()
	ended := s.ended
	if !ended {
		s.subs[b.identity(sub.SubKey)] = a
	}
	s.mu.Unlock()
	if !ended {
		a.topic.attachLocked(a)
	}
}

// deliverLocked queues envs for a's stream. A stream that must end (see
// MaxBacklog) is ended by the next settleLocked, not here, because the caller
// may be iterating what ending it changes. b.mu is held.
func (b *Broker) deliverLocked(a *attachment, envs ...Envelope) {
	s := a.s
	s.mu.Lock()
	ok := s.pushLocked(a, envs...)
	s.mu.Unlock()
	if !ok {
		b.dropping = append(b.dropping, s)
	}
}

// settleLocked ends the streams that must end. b.mu is held.
func (b *Broker) settleLocked() {
	for len(b.dropping) > 0 {
		s := b.dropping[0]
		b.dropping = b.dropping[1:]
		b.dropLocked(s)
	}
	b.dropping = nil
}

// detachLocked removes s's subscription id, purging what it queued and not
// yet handed to the writer.
func (b *Broker) detachLocked(s *Stream, id hub.SubKey) {
	s.mu.Lock()
	a := s.subs[id]
	if a != nil {
		delete(s.subs, id)
		a.removed = true
		kept := s.queue[:0]
		for _, q := range s.queue {
			if q.a != a {
				kept = append(kept, q)
			}
		}
		clear(s.queue[len(kept):]) // let go of what was purged
		s.queue = kept
		s.recountLocked()
	}
	s.mu.Unlock()
	if a != nil {
		b.releaseLocked(a)
	}
}

// releaseLocked takes a out of its topic.
func (b *Broker) releaseLocked(a *attachment) { a.topic.releaseLocked(a) }

// dropLocked ends s and releases everything it followed.
func (b *Broker) dropLocked(s *Stream) {
	s.mu.Lock()
	subs := s.endLocked()
	s.mu.Unlock()
	b.forgetLocked(s, subs)
}

// forget releases an ended stream.
func (b *Broker) forget(s *Stream, subs map[hub.SubKey]*attachment) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetLocked(s, subs)
}

func (b *Broker) forgetLocked(s *Stream, subs map[hub.SubKey]*attachment) {
	if b.streams[s.id] == s {
		delete(b.streams, s.id)
		b.presence(s.user, s.ws, false)
	}
	for _, a := range subs {
		b.releaseLocked(a)
	}
}

// streamsWhere returns the open streams keep selects.
func (b *Broker) streamsWhere(keep func(*Stream) bool) []*Stream {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Stream
	for _, s := range b.streams {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// endStreams ends the streams keep selects.
func (b *Broker) endStreams(keep func(*Stream) bool) {
	for _, s := range b.streamsWhere(keep) {
		s.end()
	}
}

// EndDeviceSessionStreams ends the streams of the device sessions with
// the digests ds: they logged out, were revoked, or are gone from the
// store.
func (b *Broker) EndDeviceSessionStreams(ds ...hub.DeviceSessionDigest) {
	ended := make(map[hub.DeviceSessionDigest]bool, len(ds))
	for _, d := range ds {
		ended[d] = true
	}
	b.endStreams(func(s *Stream) bool { return ended[s.owner] })
}

// EndUserStreams ends every stream of user: every device session of the
// user ended (a password change, the user's removal).
func (b *Broker) EndUserStreams(user string) {
	b.endStreams(func(s *Stream) bool { return s.user == user })
}

// Close ends every stream and upstream and refuses new streams. The
// background work it stops ends on its own; Wait waits for it.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.endStreams(func(*Stream) bool { return true })
	b.mu.Lock()
	for _, u := range b.ups {
		b.closeUpstreamLocked(u)
	}
	b.mu.Unlock()
}

// Wait cancels the broker's background work (upstream readers, catch-ups,
// activity watches) and waits for it to end. Call it after Close.
func (b *Broker) Wait() {
	b.stopBG()
	b.wg.Wait()
}
