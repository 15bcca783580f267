package docfeed

import (
	"context"
	"errors"
)

// ErrClosed is returned by Subscribe and Next once the feed has stopped or
// the subscription was closed.
var ErrClosed = errors.New("docfeed: closed")

// Subscription is one subscriber's ordered view of a feed: first a full
// snapshot of its context, then one patch per publish, each applying on
// the one before. When it falls behind (more undelivered patches than the
// queue bounds), the undelivered patches are dropped and the next frame is
// a fresh snapshot instead: never a gap. Frames are the JSON encodings of
// the contract's DocumentSnapshot and DocumentPatch, shared between
// subscribers: do not modify them.
//
// A Subscription is used by one reader goroutine; Close may be called from
// any goroutine, more than once.
type Subscription struct {
	st   *state
	key  Key
	wake chan struct{} // signalled (capacity 1) when a frame may be ready

	// Guarded by st.mu.
	stop     func() bool // stops the subscribing context's AfterFunc
	ctx      Key         // the effective context: key, or its folder scope once settled
	queue    [][]byte
	queued   int  // bytes in queue
	needSnap bool // after queue, the next frame is a snapshot built at read time
	closed   bool
}

// Subscribe parses key (a LiveDocumentKey; see ParseKey) and subscribes to
// the feed for that context until ctx ends or Close is called. An invalid
// key is an error wrapping ErrInvalidKey; a stopped feed is ErrClosed. A
// subscription made before Run starts sees the indexing state first.
func (f *Feed) Subscribe(ctx context.Context, key string) (*Subscription, error) {
	k, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sub := &Subscription{st: f.state, key: k, ctx: k, needSnap: true, wake: make(chan struct{}, 1)}
	f.state.mu.Lock()
	if f.state.closed {
		f.state.mu.Unlock()
		return nil, ErrClosed
	}
	f.state.subs[sub] = struct{}{}
	first := len(f.state.subs) == 1
	f.state.mu.Unlock()
	if first {
		// Git metadata is polled only while someone listens; a first
		// subscriber gets a check now rather than up to an interval late.
		f.signal(f.pollNow)
	}
	stop := context.AfterFunc(ctx, sub.Close)
	f.state.mu.Lock()
	sub.stop = stop
	f.state.mu.Unlock()
	return sub, nil
}

// Key is the context the subscription asked for. The frames' scope may
// differ: a pin to a document that is missing or binary once discovery is
// ready falls back to folder scope.
func (s *Subscription) Key() Key { return s.key }

// Next returns the next frame, waiting for one until ctx ends (ctx.Err())
// or the feed stops or the subscription is closed (ErrClosed).
func (s *Subscription) Next(ctx context.Context) ([]byte, error) {
	for {
		b, ok, err := s.tryNext()
		if err != nil || ok {
			return b, err
		}
		select {
		case <-s.wake:
		case <-s.st.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tryNext returns the next frame if there is one, without waiting.
func (s *Subscription) tryNext() ([]byte, bool, error) {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.closed || st.closed {
		return nil, false, ErrClosed
	}
	if len(s.queue) > 0 {
		b := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.queued -= len(b)
		return b, true, nil
	}
	if s.needSnap {
		s.needSnap = false
		s.ctx = st.settledKey(s.ctx)
		return st.snapshot(s.ctx), true, nil
	}
	return nil, false, nil
}

// Close ends the subscription: Next returns ErrClosed and nothing more is
// queued for it.
func (s *Subscription) Close() {
	st := s.st
	st.mu.Lock()
	stop := s.stop
	if !s.closed {
		s.closed = true
		s.queue = nil
		delete(st.subs, s)
	}
	st.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.signal()
}

// push queues a patch. Once a snapshot is due, patches are dropped: the
// snapshot, built when read, covers them. Past the bounds, the queue is
// dropped for a snapshot too. One frame larger than maxBytes is still
// admitted into an empty queue, or a large batch could never be delivered.
// Called under st.mu.
func (s *Subscription) push(b []byte, maxFrames, maxBytes int) {
	if s.needSnap || s.closed {
		return
	}
	if len(s.queue) > 0 && (len(s.queue) >= maxFrames || s.queued+len(b) > maxBytes) {
		s.queue, s.queued = nil, 0
		s.resnapshot()
		return
	}
	s.queue = append(s.queue, b)
	s.queued += len(b)
	s.signal()
}

// resnapshot makes the next frame after the queued patches a snapshot,
// built when the subscriber reads it: patches already queued still apply
// in order before it, later ones are dropped in its favour, and a second
// resnapshot before it is read changes nothing (snapshots replace
// undelivered snapshots). Called under st.mu.
func (s *Subscription) resnapshot() {
	s.needSnap = true
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// subscribers counts the current subscriptions.
func (s *state) subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}
