package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"
)

// Reconnect backoff: 1 s, doubling, at most 15 s, back to 1 s once a
// stream has said hello.
const (
	minBackoff = time.Second
	maxBackoff = 15 * time.Second
)

// idleTimeout is how long a stream may stay silent before the client
// takes the connection for dead: three missed `: keepalive` frames (the
// Hub writes one every 15 s while idle).
const idleTimeout = 45 * time.Second

// reAddAttempts bounds the tries of one re-add that gets a 5xx or no
// answer before the client reconnects instead.
const reAddAttempts = 3

var (
	errEnded = errors.New("the Hub ended the stream")
	errIdle  = errors.New("no bytes for three keepalive intervals")
)

// stream follows one workspace's live stream across connections. It keeps
// the cursor of each subscription, advancing it only on `data` events,
// answers `resync` by adding the subscription again, and reconnects with
// backoff, presenting every kept cursor. One goroutine runs it.
type stream struct {
	client   *http.Client
	hub      *url.URL
	token    string // the Hub session id, sent as a bearer credential
	ws       string
	activity bool
	subs     []*subscription
	out      io.Writer

	// idle is idleTimeout; 0 turns the watchdog off.
	idle time.Duration
	// wait pauses for d or until ctx ends (then it returns ctx's error).
	// Tests replace it so that backoff takes no time.
	wait func(ctx context.Context, d time.Duration) error
}

func newStream(c *http.Client, hub *url.URL, token, ws string, out io.Writer, subs ...*subscription) *stream {
	return &stream{client: c, hub: hub, token: token, ws: ws, activity: true,
		subs: subs, out: out, idle: idleTimeout, wait: sleep}
}

// sleep is the real wait.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// permanentError marks a failure that another connection would repeat:
// the program ends with it.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// run connects, reads, and reconnects until ctx ends (it then returns nil)
// or the Hub refuses the stream in a way that retrying cannot change: 401
// (errSessionGone), 400, 403 or 404.
func (s *stream) run(ctx context.Context) error {
	delay := minBackoff
	for reconnect := false; ; reconnect = true {
		greeted, err := s.connect(ctx, reconnect)
		if ctx.Err() != nil {
			return nil
		}
		if p, ok := errors.AsType[*permanentError](err); ok {
			return p.err
		}
		if greeted {
			delay = minBackoff
		}
		fmt.Fprintf(s.out, "stream: %v; reconnecting in %v\n", err, delay)
		if s.wait(ctx, delay) != nil {
			return nil
		}
		delay = min(2*delay, maxBackoff)
	}
}

// liveURL is GET /api/hub/live with the workspace, the activity topic and
// every subscription with its kept cursor.
func (s *stream) liveURL(reconnect bool) (string, error) {
	subs := make([]subscription, len(s.subs))
	for i, sub := range s.subs {
		subs[i] = *sub
	}
	j, err := json.Marshal(subs)
	if err != nil {
		return "", err
	}
	q := url.Values{"ws": {s.ws}, "subs": {string(j)}}
	if s.activity {
		q.Set("activity", "1")
	}
	if reconnect {
		q.Set("reconnect", "1")
	}
	u := s.hub.JoinPath("api", "hub", "live")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// connect opens one stream and reads it to its end. It reports whether the
// stream said hello, and why it ended; the error is a permanentError when
// reconnecting would fail the same way.
func (s *stream) connect(ctx context.Context, reconnect bool) (greeted bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	u, err := s.liveURL(reconnect)
	if err != nil {
		return false, &permanentError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, &permanentError{err}
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := readStatusError("GET /api/hub/live", resp)
		switch err.code {
		case http.StatusUnauthorized:
			return false, &permanentError{fmt.Errorf("%w: %w", errDeviceSessionGone, err)}
		case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
			return false, &permanentError{err}
		}
		return false, err // a proxy's 502, a 503: try again later
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("GET /api/hub/live: answered %q, not an event stream", mt)
	}

	var body io.Reader = resp.Body
	if s.idle > 0 {
		t := time.AfterFunc(s.idle, func() { cancel(errIdle) })
		defer t.Stop()
		body = &idleReader{r: resp.Body, t: t, d: s.idle}
	}
	c := &conn{s: s}
	var failed error
	err = readEvents(body, func(ev event) bool {
		failed = c.handle(ctx, ev)
		return failed == nil
	})
	switch {
	case failed != nil:
		err = failed
	case err == nil:
		err = errEnded
	case errors.Is(context.Cause(ctx), errIdle):
		err = errIdle
	}
	return c.streamID != "", err
}

// idleReader restarts the watchdog t whenever bytes arrive, comments
// included.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.t.Reset(ir.d)
	}
	return n, err
}

// conn is what one connection knows: the stream id its hello gave.
type conn struct {
	s        *stream
	streamID string
}

// handle takes one event. An error ends the connection.
func (c *conn) handle(ctx context.Context, ev event) error {
	out := c.s.out
	switch ev.name {
	case "hello":
		if c.streamID != "" {
			return errors.New("protocol error: a second hello")
		}
		var h liveHello
		if err := json.Unmarshal([]byte(ev.data), &h); err != nil || h.StreamID == "" {
			return errors.New("protocol error: a hello without a stream id")
		}
		c.streamID = h.StreamID
		fmt.Fprintf(out, "hello: streaming workspace %q\n", c.s.ws)
	case "live":
		if c.streamID == "" {
			return errors.New("protocol error: a live event before hello")
		}
		var env liveEnvelope
		if err := json.Unmarshal([]byte(ev.data), &env); err != nil {
			return fmt.Errorf("protocol error: unreadable envelope: %w", err)
		}
		return c.envelope(ctx, env)
	default:
		fmt.Fprintf(out, "ignoring event %q: this client's contract is out of date\n", ev.name)
	}
	return nil
}

// envelope prints env and applies it to the subscription it belongs to.
func (c *conn) envelope(ctx context.Context, env liveEnvelope) error {
	if !knownTopic(env.Topic) || !knownKind(env.Event.Kind) {
		fmt.Fprintf(c.s.out, "ignoring an envelope of topic %q, kind %q: this client's contract is out of date\n",
			env.Topic, env.Event.Kind)
		return nil
	}
	fmt.Fprintln(c.s.out, formatEnvelope(env))
	key := ""
	if env.Key != nil {
		key = *env.Key
	}
	sub := c.s.find(env.Topic, key)
	if sub == nil {
		return nil // activity, which has no cursor to keep
	}
	switch env.Event.Kind {
	case kindData:
		sub.Cursor = env.Cursor
	case kindResync:
		// Detached until added again. Until then, and after any reconnect,
		// the cursor to present is none: the current state.
		sub.Cursor = ""
		return c.reAdd(ctx, sub)
	}
	return nil
}

// find returns the kept subscription of topic and key, or nil.
func (s *stream) find(topic, key string) *subscription {
	for _, sub := range s.subs {
		if sub.Topic == topic && sub.Key == key {
			return sub
		}
	}
	return nil
}

// reAdd answers a resync: it adds sub again from its (empty) cursor through
// POST /api/hub/live/{streamId}/subscriptions. A 5xx or no answer is tried
// again with backoff a few times; 400, 403 and 404 mean this stream cannot
// take the change. A failure ends the connection, and the reconnect
// presents the whole set. A 401 ends the program.
func (c *conn) reAdd(ctx context.Context, sub *subscription) error {
	// The stream id stays out of messages: with the session it controls
	// the stream.
	const reAddOp = "POST /api/hub/live/{streamId}/subscriptions"
	u := c.s.hub.JoinPath("api", "hub", "live", c.streamID, "subscriptions")
	change := subscriptionChange{Add: []subscription{*sub}}
	delay := minBackoff
	for attempt := 1; ; attempt++ {
		var res struct {
			OK bool `json:"ok"`
		}
		err := postJSON(ctx, c.s.client, reAddOp, u, c.s.token, change, &res)
		if err == nil && !res.OK {
			err = errors.New(reAddOp + ": the answer is not ok")
		}
		switch code := statusCode(err); {
		case err == nil:
			fmt.Fprintf(c.s.out, "re-added %s from the current state\n", describe(sub))
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case code == http.StatusUnauthorized:
			return &permanentError{fmt.Errorf("%w: %w", errDeviceSessionGone, err)}
		case code >= 400 && code < 500:
			return fmt.Errorf("the stream refused to re-add %s: %w", describe(sub), err)
		case attempt == reAddAttempts:
			return fmt.Errorf("re-adding %s failed %d times: %w", describe(sub), attempt, err)
		}
		fmt.Fprintf(c.s.out, "re-adding %s: %v; trying again in %v\n", describe(sub), err, delay)
		if err := c.s.wait(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, maxBackoff)
	}
}

// describe names a subscription for people.
func describe(sub *subscription) string {
	if sub.Key == "" {
		return sub.Topic
	}
	return fmt.Sprintf("%s %q", sub.Topic, sub.Key)
}
