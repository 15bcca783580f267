package childrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// errFeedClosed is what Next returns once Close was called.
var errFeedClosed = hub.Errorf(hub.Unavailable, "the feed is closed")

// errWorkspaceSessionEnded ends the feeds of a session that has ended.
var errWorkspaceSessionEnded = hub.Errorf(hub.Unavailable, "session has ended")

// feedSource opens feeds of one session.
type feedSource struct {
	client   *http.Client    // every connection reaches the session; no overall timeout
	done     <-chan struct{} // closed once the session has ended
	maxEvent int             // bound of one event's data
}

// childFeed is the child's feed request of req: the topic table says
// whether a child serves the topic (NotFound otherwise) and which fields
// its feed takes; only those are passed on.
func childFeed(req hub.FeedRequest) (childproto.FeedRequest, error) {
	t, ok := hub.LookupTopic(req.Topic)
	if !ok || !t.Feed {
		return childproto.FeedRequest{}, notServed(req.Topic)
	}
	creq := childproto.FeedRequest{Topic: t.Name}
	if t.Keyed() {
		creq.Key = req.Key
	}
	if t.Resumes() {
		creq.Cursor = req.Cursor
	}
	return creq, nil
}

// notServed is the NotFound of a feed the session does not serve.
func notServed(topic hub.Topic) error {
	return hub.Errorf(hub.NotFound, "the session does not serve the %s feed", topic)
}

// open sends the feed's request and returns once the child has answered
// it with the headers of an event stream, or fails within ctx. The request
// itself does not end with ctx: it lasts until the feed is closed, fails,
// or the session ends.
func (src feedSource) open(ctx context.Context, req hub.FeedRequest) (hub.Feed, error) {
	creq, err := childFeed(req)
	if err != nil {
		return nil, err
	}
	path, err := creq.URI()
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "session feed request")
	}
	resp, cancel, err := src.get(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := acceptFeed(resp, creq.Topic); err != nil {
		resp.Body.Close() // the connection is never reused: nothing to drain
		cancel()
		return nil, err
	}
	f := newStream[hub.FeedFrame](cancel)
	go f.read(resp.Body, src.maxEvent, src.done, func(ev childproto.Event) (hub.FeedFrame, bool, bool, error) {
		cfr, ok, err := childproto.DecodeFrame(creq.Topic, ev)
		// A FrameResync is the last frame.
		return hubFrame(cfr), ok, cfr.Kind == childproto.FrameResync, err
	})
	return f, nil
}

// get sends GET path to the session and returns its answer, once its
// headers came, and what ends the request; or fails within ctx. The
// request does not end with ctx: only cancel (or the body's end) ends it.
// An ended, unreachable or cut-short session is Unavailable.
func (src feedSource) get(ctx context.Context, path string) (*http.Response, context.CancelFunc, error) {
	select {
	case <-src.done:
		return nil, nil, errWorkspaceSessionEnded
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, hub.Wrap(hub.Unavailable, err, "session feed could not be opened")
	}
	fctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel) // opening is bounded by ctx
	hreq, err := http.NewRequestWithContext(fctx, http.MethodGet, "http://session"+path, nil)
	if err != nil {
		stop()
		cancel()
		return nil, nil, hub.Wrap(hub.Internal, err, "session feed request")
	}
	hreq.Header.Set("Accept", childproto.EventStreamType)
	resp, err := src.client.Do(hreq)
	if !stop() {
		// ctx ended while opening: the feed was cancelled with it.
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
		return nil, nil, hub.Wrap(hub.Unavailable, ctx.Err(), "session feed could not be opened")
	}
	if err != nil {
		cancel()
		// The URL names the conversation; the cause keeps only what failed.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		if hub.KindOf(err) == hub.Unavailable {
			return nil, nil, err // the session ended or is unreachable: Dial says so
		}
		return nil, nil, hub.Wrap(hub.Unavailable, err, "session feed could not be opened")
	}
	return resp, cancel, nil
}

// acceptFeed checks the child's answer: 200 with an event stream opens the
// feed, 404 is a feed the session does not have, anything else is
// Unavailable. On a topic whose key is required, a 404 is the child's word
// that the key names nothing it has ("unknown conversation"). Public
// messages never quote the child.
func acceptFeed(resp *http.Response, topic hub.Topic) error {
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		if t, _ := hub.LookupTopic(topic); t.Key == hub.KeyRequired {
			return hub.Errorf(hub.NotFound, "unknown %s", topic)
		}
		return notServed(topic)
	default:
		return hub.Wrap(hub.Unavailable, fmt.Errorf("feed answered %s", resp.Status),
			"session refused the feed")
	}
	return acceptStream(resp)
}

// acceptStream checks that an answer of 200 is an event stream.
func acceptStream(resp *http.Response) error {
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != childproto.EventStreamType {
		return hub.Wrap(hub.Unavailable, errors.New("feed answered without an event stream"),
			"session refused the feed")
	}
	return nil
}

// stream is an open feed of frames F (a hub.Feed of hub.FeedFrame, a
// hub.NotificationFeed of hub.NotificationFrame): a goroutine reads the
// child's events into frames, one at a time, so a Hub that stops calling
// Next stops reading and the child's writes block, rather than frames
// piling up here.
type stream[F any] struct {
	frames    chan F        // unbuffered: the reader hands each frame over
	ended     chan struct{} // closed once the reader has returned; err is set then
	err       error
	closed    chan struct{}
	closeOnce sync.Once
	cancel    context.CancelFunc // ends the request
}

func newStream[F any](cancel context.CancelFunc) *stream[F] {
	return &stream[F]{frames: make(chan F), ended: make(chan struct{}), closed: make(chan struct{}), cancel: cancel}
}

// Next returns the next frame, the feed's end (io.EOF in order, another
// error on failure), ctx's error when ctx ends first (the feed stays
// open), or errFeedClosed after Close.
func (f *stream[F]) Next(ctx context.Context) (F, error) {
	var none F
	select {
	case <-f.closed:
		return none, errFeedClosed
	default:
	}
	select {
	case fr := <-f.frames:
		return fr, nil
	case <-f.ended:
		// The reader hands a frame over before it can end, so none is lost.
		select {
		case <-f.closed:
			return none, errFeedClosed
		default:
			return none, f.err
		}
	case <-f.closed:
		return none, errFeedClosed
	case <-ctx.Done():
		return none, ctx.Err()
	}
}

// Close cancels the request, so the child's stream ends and it stops
// producing the feed. It does not wait for the reader, which ends at once.
func (f *stream[F]) Close() {
	f.closeOnce.Do(func() {
		close(f.closed)
		f.cancel()
	})
}

// read turns the body's events into frames with decode until the stream
// ends, fails, the feed is closed or the session ends, then releases the
// request. decode says whether an event is a frame (ok; an event the feed
// does not define is skipped), whether it is the feed's last, or why the
// event breaks the protocol (which fails the feed).
func (f *stream[F]) read(body io.ReadCloser, maxEvent int, done <-chan struct{},
	decode func(childproto.Event) (fr F, ok, last bool, err error)) {
	defer close(f.ended)
	defer body.Close()
	defer f.cancel()
	// A session that ends cuts its streams; cancelling makes that prompt
	// even when the connection lingers.
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-done:
			f.cancel()
		case <-stopWatch:
		}
	}()

	events := childproto.NewEventReader(body, maxEvent)
	for {
		ev, err := events.Next()
		if err != nil {
			f.err = f.failure(err, done)
			return
		}
		fr, ok, last, err := decode(ev)
		if err != nil {
			f.err = hub.Wrap(hub.Unavailable, err, "session feed broke its protocol")
			return
		}
		if !ok {
			continue
		}
		select {
		case f.frames <- fr:
		case <-f.closed:
			f.err = errFeedClosed
			return
		}
		if last {
			f.err = io.EOF
			return
		}
	}
}

// failure is the feed's error for the reader's err.
func (f *stream[F]) failure(err error, done <-chan struct{}) error {
	select {
	case <-f.closed:
		return errFeedClosed
	default:
	}
	select {
	case <-done:
		if !errors.Is(err, io.EOF) {
			return errWorkspaceSessionEnded
		}
	default:
	}
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, childproto.ErrEventTooLarge):
		return hub.Wrap(hub.Unavailable, err, "session feed sent an event too large")
	}
	return hub.Wrap(hub.Unavailable, err, "session feed failed")
}

// hubFrame is the port's frame of a child's frame.
func hubFrame(fr childproto.Frame) hub.FeedFrame {
	kind := hub.FrameData
	switch fr.Kind {
	case childproto.FrameOpen:
		kind = hub.FrameOpen
	case childproto.FrameResync:
		kind = hub.FrameResync
	}
	return hub.FeedFrame{Kind: kind, Cursor: fr.Cursor, Data: fr.Data}
}
