package live

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// KeepaliveInterval is how long a live stream stays silent before a
// keepalive is due.
const KeepaliveInterval = 15 * time.Second

// ErrEnded is returned by Stream.Next once the stream has ended:
// closed by its client, its session logged out, revoked or expired, its
// client stalled or too far behind, or the Hub closed.
var ErrEnded = errors.New("live stream ended")

// Stream is one client's live stream. Producers add envelopes without
// ever blocking; the stream's single writer takes them with Next.
type Stream struct {
	id    string
	owner hub.DeviceSessionDigest
	user  string
	ws    string
	b     *Broker

	// sending holds a token while a batch is written, so a subscription
	// change can wait, for a bounded time, for a batch already taken
	// (see waitWriter).
	sending chan struct{}
	// life ends when the stream does (end cancels it), so a transport
	// can react with context.AfterFunc rather than a goroutine per stream.
	life    context.Context
	endLife context.CancelFunc

	mu       sync.Mutex
	queue    []queued
	backlog  int                        // bytes of the queue's envelopes, snapshots aside
	largest  int                        // the size of the largest of them
	subs     map[hub.SubKey]*attachment // by SubKey.identity
	ended    bool
	due      bool      // a keepalive is due
	idle     hub.Timer // the keepalive timer; one at a time, re-armed lazily
	lastSent time.Time // when the writer last took a batch
	// writing is set while the writer writes a batch it took; progressed
	// is when it last made progress (see MaxBacklog), or when
	// envelopes began to wait for an idle writer.
	writing    bool
	progressed time.Time
	stall      hub.Timer // armed while the stream is behind
	wake       chan struct{}
}

// maxWriterWait bounds how long a subscription change waits for a batch
// being written while the writer makes no progress, and maxChangeWait how
// long it waits in all. A writer with no progress for maxWriterWait is
// stuck on a client that does not read; a batch that takes longer than
// maxChangeWait holds far more than a client can have asked to change
// under. Either way the stream is ended rather than the change left
// hanging.
const (
	maxWriterWait = 5 * time.Second
	maxChangeWait = 30 * time.Second
)

func newStream(b *Broker, caller hub.DeviceSession, ws string) *Stream {
	life, endLife := context.WithCancel(context.Background())
	return &Stream{id: newStreamID(), owner: caller.Digest, user: caller.User, ws: ws, b: b,
		subs: map[hub.SubKey]*attachment{}, wake: make(chan struct{}, 1),
		sending: make(chan struct{}, 1), life: life, endLife: endLife, lastSent: b.clock.Now(), progressed: b.clock.Now()}
}

// Context is cancelled once the stream has ended, so a transport can
// abandon a write the client is not reading.
func (s *Stream) Context() context.Context { return s.life }

// Done is closed once the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.life.Done() }

// queued is an envelope waiting to be written, with the attachment that
// produced it (nil for none), so a removal can purge it.
type queued struct {
	env Envelope
	a   *attachment
}

// attachment is one subscription of a stream.
type attachment struct {
	s   *Stream
	sub hub.Subscription // as the client gave it; its key is echoed
	// removed is set under s.mu when the subscription is removed or
	// replaced; nothing more is queued for it.
	removed bool

	topic topic // the subscription's topic

	// Guarded by Broker.mu:
	up      *upstream // followed upstream; nil for other topics or once released
	cursor  string    // the last cursor sent (or the client's)
	pending bool      // waiting for the upstream to be live to join it
	told    bool      // sent `unavailable` in this failure episode
	// catchUp, for a conversation, is the joiner's own feed while it
	// catches up with the upstream (catchup.go); rejoin reopens a
	// failed one after retryDelay.
	catchUp    *catchUp
	rejoin     hub.Timer
	retryDelay time.Duration
}

// envelope makes an envelope of a's subscription.
func (a *attachment) envelope(kind hub.EventKind, cursor string, data []byte) Envelope {
	return Envelope{WS: a.s.ws, Topic: a.sub.Topic, Key: a.sub.Key, Keyed: a.sub.Keyed,
		Cursor: cursor, Kind: kind, Data: data}
}

func newStreamID() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ID is the stream's unguessable handle (LiveHello.streamId).
func (s *Stream) ID() string { return s.id }

// Next waits until envelopes are queued, a keepalive is due or the stream
// ends, and calls write with the envelopes in order (keepalive true and no
// envelopes when only a keepalive is due). A keepalive first checks that
// the stream's session is still active, ending the stream otherwise. Next
// returns write's error, ctx's, or ErrEnded; the stream is ended on any
// error. Only one goroutine may call Next.
func (s *Stream) Next(ctx context.Context, write func(envs []Envelope, keepalive bool) error) error {
	for {
		s.mu.Lock()
		if s.ended {
			s.mu.Unlock()
			return ErrEnded
		}
		if len(s.queue) > 0 || s.due {
			break // with s.mu held
		}
		if s.idle == nil {
			s.armIdleLocked(KeepaliveInterval - s.b.clock.Now().Sub(s.lastSent))
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			s.end()
			return ctx.Err()
		}
	}
	// s.mu is held. The keepalive timer stays armed: it checks the
	// silence when it fires, so a busy stream costs no timer per batch.
	s.lastSent = s.b.clock.Now()
	s.progressed = s.lastSent
	keepalive := s.due && len(s.queue) == 0
	s.due = false
	s.mu.Unlock()
	if keepalive && !s.b.host.DeviceSessionActive(ctx, s.owner) {
		s.end()
		return ErrEnded
	}

	s.sending <- struct{}{}
	defer func() { <-s.sending }()
	s.mu.Lock()
	batch := make([]Envelope, 0, len(s.queue))
	for _, q := range s.queue {
		if q.a == nil || !q.a.removed {
			batch = append(batch, q.env)
		}
	}
	s.queue, s.backlog, s.largest = s.queue[:0], 0, 0
	s.writing = true
	s.mu.Unlock()
	if len(batch) == 0 && !keepalive {
		s.wrote()
		return nil // everything taken was purged meanwhile
	}
	err := write(batch, keepalive)
	s.wrote()
	if err != nil {
		s.end()
		return err
	}
	return nil
}

// armIdleLocked arms the keepalive timer to fire after d. When it fires
// it makes a keepalive due if the stream has been silent for
// KeepaliveInterval, and otherwise re-arms itself for the rest. s.mu is
// held.
func (s *Stream) armIdleLocked(d time.Duration) {
	s.idle = s.b.clock.AfterFunc(d, func() {
		s.mu.Lock()
		if s.ended {
			s.mu.Unlock()
			return
		}
		s.idle = nil
		if rest := KeepaliveInterval - s.b.clock.Now().Sub(s.lastSent); rest > 0 {
			s.armIdleLocked(rest)
			s.mu.Unlock()
			return
		}
		s.due = true
		s.mu.Unlock()
		s.signal()
	})
}

// waitWriter waits until no batch is being written, and reports false
// when the writer made no progress for maxWriterWait or the wait passed
// maxChangeWait (the stream is then ended), or ctx ended first.
func (s *Stream) waitWriter(ctx context.Context) bool {
	start := s.b.clock.Now()
	for range maxChangeWait / maxWriterWait {
		expired := make(chan struct{})
		t := s.b.clock.AfterFunc(maxWriterWait, func() { close(expired) })
		select {
		case s.sending <- struct{}{}:
			<-s.sending
			t.Stop()
			return true
		case <-s.Done():
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		case <-expired:
		}
		now := s.b.clock.Now()
		s.mu.Lock()
		stuck := now.Sub(s.progressed) >= maxWriterWait
		s.mu.Unlock()
		if stuck || now.Sub(start) >= maxChangeWait {
			break
		}
	}
	s.end()
	return false
}

// signal wakes the writer without blocking.
func (s *Stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pushLocked queues envs from a (nil for none); the caller holds s.mu. It
// reports false when the stream must end (see MaxBacklog): the caller,
// holding the broker's lock, ends it once it has let go of s.mu
// (Broker.dropLocked). Pushing to an ended stream or for a removed
// attachment does nothing.
func (s *Stream) pushLocked(a *attachment, envs ...Envelope) bool {
	if s.ended || (a != nil && a.removed) {
		return true
	}
	if len(s.queue) == 0 && !s.writing {
		// An idle writer owes nothing: its wait starts now.
		s.progressed = s.b.clock.Now()
	}
	for _, e := range envs {
		if e.coalesce && s.coalesceLocked(a, e) {
			continue
		}
		s.queue = append(s.queue, queued{env: e, a: a})
		if !e.coalesce {
			n := e.size()
			s.backlog += n
			s.largest = max(s.largest, n)
		}
	}
	s.signal()
	return s.judgeLocked()
}

// coalesceLocked puts e in the place of the oldest undelivered coalescible
// envelope of a, reporting whether there was one. A newer document
// snapshot makes an unsent one worthless, so a stalled reader flooded
// with snapshots holds one, not all; they do not count toward the
// backlog for the same reason. s.mu is held.
func (s *Stream) coalesceLocked(a *attachment, e Envelope) bool {
	for i := range s.queue {
		if q := &s.queue[i]; q.a == a && q.env.coalesce {
			q.env = e
			return true
		}
	}
	return false
}

// Close ends the stream and releases its subscriptions.
func (s *Stream) Close() { s.end() }

func (s *Stream) end() {
	s.mu.Lock()
	subs := s.endLocked()
	s.mu.Unlock()
	s.b.forget(s, subs)
}

// endLocked ends the stream and returns the attachments it held, for the
// broker to release; the caller holds s.mu.
func (s *Stream) endLocked() map[hub.SubKey]*attachment {
	if s.ended {
		return nil
	}
	s.ended = true
	s.queue, s.backlog, s.largest = nil, 0, 0
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if s.stall != nil {
		s.stall.Stop()
		s.stall = nil
	}
	subs := s.subs
	s.subs = nil
	for _, a := range subs {
		a.removed = true
	}
	s.endLife()
	s.signal()
	return subs
}
