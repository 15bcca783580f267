package main

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func noPost(t *testing.T) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		t.Error("unexpected subscription change")
		fail(w, http.StatusNotFound, "unknown stream")
	}
}

// TestStreamReconnects: the first stream says hello, delivers envelopes and
// ends; the client reconnects at once (after a 1 s backoff it did not
// really wait) with reconnect=1 and the cursor of the last data event, not
// the cursor a signal carried.
func TestStreamReconnects(t *testing.T) {
	ends := []struct {
		name    string
		end     func(w http.ResponseWriter)
		because string
	}{
		{"the hub ends the stream", func(http.ResponseWriter) {}, "stream: the Hub ended the stream; reconnecting in 1s"},
		{"the connection drops mid-frame", drop, "stream: unexpected EOF; reconnecting in 1s"},
	}
	for _, tt := range ends {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				openStream(w)
				if n > 1 {
					send(w, helloFrame("s2"))
					hold(r)
					return
				}
				send(w, helloFrame("s1"),
					docSnapshot("e.1", 4),
					activityData("other", "a.1"),
					docSignal("unavailable", "e.7"),
					": keepalive\n\n",
					docSignal("ready", "e.8"))
				tt.end(w)
			}, noPost(t))
			out := make(lines, 100)
			s, waits := testStream(h, out)
			cancel, done := start(t, s)

			first := recv(t, h.opens)
			is.Equal(first.Get("ws"), testWS)         // the stream's workspace
			is.Equal(first.Get("activity"), "1")      // with the activity topic
			is.Equal(first.Get("reconnect"), "")      // a first open is no reconnect
			is.Equal(first.Get("subs"), subsWith("")) // the document subscription from the current state

			second := recv(t, h.opens)
			is.Equal(second.Get("ws"), testWS)            // the same workspace
			is.Equal(second.Get("activity"), "1")         // and topics
			is.Equal(second.Get("reconnect"), "1")        // marked as a reconnect
			is.Equal(second.Get("subs"), subsWith("e.1")) // presenting the last data cursor, not a signal's

			cancel()
			is.NoErr(recv(t, done))                             // cancellation stops it cleanly
			is.Equal(waits.all(), []time.Duration{time.Second}) // one backoff of 1 s, not really waited

			got := out.drain()
			is.True(slices.Contains(got, `hello: streaming workspace "myproject"`)) // hello is reported
			is.True(slices.Contains(got, `live ws="myproject" topic=document key="compareTarget=last-commit"`+
				` kind=data cursor="e.1" update="snapshot" epoch="w1" revision=4`)) // document data shows the update
			is.True(slices.Contains(got, `live ws="other" topic=activity kind=data cursor="a.1"`+
				` running=true working=false awaiting=true finished=false`)) // activity shows the four facts
			is.True(slices.Contains(got, `live ws="myproject" topic=document key="compareTarget=last-commit"`+
				` kind=unavailable cursor="e.7"`)) // signals show their cursor
			is.True(slices.Contains(got, tt.because)) // why it reconnected
		})
	}
}

// TestStreamResync: a resync makes the client add the subscription again
// from no cursor on the same stream; what follows depends on the answer.
func TestStreamResync(t *testing.T) {
	tests := []struct {
		name       string
		answers    []int // status of each POST, in order
		wantErr    error
		wantCursor string          // presented on reconnect
		wantWaits  []time.Duration // re-add retries, then the reconnect
	}{
		{
			name:       "applied",
			answers:    []int{200},
			wantCursor: "e.2", // the fresh snapshot's, delivered after the re-add
			wantWaits:  []time.Duration{time.Second},
		},
		{
			name:       "stream unknown",
			answers:    []int{404},
			wantCursor: "", // reconnect with the whole set, this one from the current state
			wantWaits:  []time.Duration{time.Second},
		},
		{
			name:       "503, then applied",
			answers:    []int{503, 200},
			wantCursor: "e.2",
			wantWaits:  []time.Duration{time.Second, time.Second},
		},
		{
			name:       "no success in three tries",
			answers:    []int{503, 502, 500},
			wantCursor: "",
			wantWaits:  []time.Duration{time.Second, 2 * time.Second, time.Second},
		},
		{
			name:    "session gone",
			answers: []int{401},
			wantErr: errDeviceSessionGone,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			applied := make(chan struct{})
			h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				openStream(w)
				if n > 1 {
					send(w, helloFrame("s2"))
					hold(r)
					return
				}
				send(w, helloFrame("s1"), docSnapshot("e.1", 4), docSignal("resync", "e.1"))
				select {
				case <-applied:
					send(w, docSnapshot("e.2", 9), docSignal("ready", "e.2"))
				case <-r.Context().Done():
				}
			}, func(n int, w http.ResponseWriter, r *http.Request) {
				code := tt.answers[min(n, len(tt.answers))-1]
				if code != http.StatusOK {
					fail(w, code, http.StatusText(code))
					return
				}
				ok(w)
				close(applied)
			})
			out := make(lines, 100)
			s, waits := testStream(h, out)
			cancel, done := start(t, s)

			is.Equal(recv(t, h.opens).Get("subs"), subsWith("")) // the first open
			for range tt.answers {
				p := recv(t, h.posts)
				is.Equal(p.path, "/api/hub/live/s1/subscriptions")                                               // on the stream that said resync
				is.Equal(p.auth, "Bearer "+testToken)                                                            // with the session
				is.Equal(p.contentType, "application/json")                                                      // as JSON
				is.Equal(p.body, `{"add":[{"topic":"document","key":"compareTarget=last-commit","cursor":""}]}`) // adding it again from the current state
			}

			if tt.wantErr != nil {
				err := recv(t, done)
				is.True(errors.Is(err, tt.wantErr)) // the program ends
				is.Equal(statusCode(err), 401)      // saying why
				is.Equal(len(h.opens), 0)           // without reconnecting
				is.Equal(len(waits.all()), 0)       // or waiting
				return
			}
			second := recv(t, h.opens)
			is.Equal(second.Get("reconnect"), "1")                // a reconnect
			is.Equal(second.Get("subs"), subsWith(tt.wantCursor)) // with the cursor kept since the resync
			cancel()
			is.NoErr(recv(t, done))             // cancellation stops it cleanly
			is.Equal(len(h.posts), 0)           // no more re-adds than answers
			is.Equal(waits.all(), tt.wantWaits) // backoff as expected
			for _, line := range out.drain() {
				is.True(!strings.Contains(line, "/s1/")) // the stream id stays out of messages
			}
		})
	}
}

// TestStreamRefused: an open the Hub refuses before the stream starts ends
// the program, except for a status that may pass (a 503).
func TestStreamRefused(t *testing.T) {
	tests := []struct {
		code     int
		msg      string
		gone     bool // errSessionGone
		retrying bool
	}{
		{code: 401, msg: "authentication required", gone: true},
		{code: 400, msg: "subscription cursor is too large"},
		{code: 403, msg: "cross-origin request rejected"},
		{code: 404, msg: "unknown workspace"},
		{code: 503, msg: "the Hub is starting", retrying: true},
		{code: 502, msg: "bad gateway", retrying: true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			is := is.New(t)
			h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					fail(w, tt.code, tt.msg)
					return
				}
				openStream(w)
				send(w, helloFrame("s2"))
				hold(r)
			}, noPost(t))
			out := make(lines, 100)
			s, waits := testStream(h, out)
			cancel, done := start(t, s)
			recv(t, h.opens)

			if tt.retrying {
				is.Equal(recv(t, h.opens).Get("reconnect"), "1")    // it tries again
				is.Equal(waits.all(), []time.Duration{time.Second}) // after a backoff
				cancel()
				is.NoErr(recv(t, done)) // cancellation stops it cleanly
				return
			}
			err := recv(t, done)
			is.True(err != nil)                                     // the program ends
			is.Equal(statusCode(err), tt.code)                      // with the status
			is.True(strings.Contains(err.Error(), tt.msg))          // and the Hub's message
			is.Equal(errors.Is(err, errDeviceSessionGone), tt.gone) // a 401 says the session is gone
			is.Equal(len(h.opens), 0)                               // it does not try again
			is.Equal(len(waits.all()), 0)                           // nor wait
		})
	}
}

// TestStreamBackoff: failed opens wait 1, 2, 4, 8, then 15 s at most; a
// stream that said hello starts the sequence over.
func TestStreamBackoff(t *testing.T) {
	is := is.New(t)
	h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n != 6 {
			fail(w, http.StatusServiceUnavailable, "try later")
			return
		}
		openStream(w)
		send(w, helloFrame("s6"))
	}, noPost(t))
	s, _ := testStream(h, make(lines, 100))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []time.Duration
	s.wait = func(ctx context.Context, d time.Duration) error {
		got = append(got, d)
		if len(got) == 11 {
			cancel()
		}
		return ctx.Err()
	}
	is.NoErr(s.run(ctx)) // it stops when cancelled during a wait
	sec := time.Second
	is.Equal(got, []time.Duration{sec, 2 * sec, 4 * sec, 8 * sec, 15 * sec, // five failures
		sec, 2 * sec, 4 * sec, 8 * sec, 15 * sec, 15 * sec}) // a hello, then failures again
}

// TestStreamContractDrift: what this client does not know is reported and
// skipped, and a stream that breaks the hello rule is dropped.
func TestStreamContractDrift(t *testing.T) {
	is := is.New(t)
	h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		openStream(w)
		switch n {
		case 1:
			send(w, "event: ping\ndata: {}\n\n", helloFrame("s1"),
				liveFrame(`{"ws":"myproject","topic":"weather","cursor":"w.1","event":{"kind":"data","data":{}}}`),
				docSignal("rewind", "x.9"),
				docSnapshot("e.1", 1))
		case 2:
			send(w, helloFrame("s2"), helloFrame("s3"), docSnapshot("e.2", 2))
		case 3:
			send(w, docSnapshot("e.3", 3), helloFrame("s4"))
		default:
			send(w, helloFrame("s5"))
			hold(r)
		}
	}, noPost(t))
	out := make(lines, 100)
	s, waits := testStream(h, out)
	cancel, done := start(t, s)
	for range 3 {
		recv(t, h.opens)
	}
	is.Equal(recv(t, h.opens).Get("subs"), subsWith("e.1")) // only the data event of a known kind moved the cursor
	cancel()
	is.NoErr(recv(t, done)) // cancellation stops it cleanly

	sec := time.Second
	is.Equal(waits.all(), []time.Duration{sec, sec, 2 * sec}) // a stream that said hello resets the backoff
	got := out.drain()
	is.True(slices.Contains(got, `ignoring event "ping": this client's contract is out of date`)) // unknown event names
	is.True(containsPrefix(got, `ignoring an envelope of topic "weather", kind "data"`))          // unknown topics
	is.True(containsPrefix(got, `ignoring an envelope of topic "document", kind "rewind"`))       // unknown kinds
	is.True(containsPrefix(got, "stream: protocol error: a second hello"))                        // a second hello
	is.True(containsPrefix(got, "stream: protocol error: a live event before hello"))             // a live event first
}

// TestStreamIdle: a stream that stays silent past the watchdog is taken for
// dead and replaced.
func TestStreamIdle(t *testing.T) {
	is := is.New(t)
	h := newFakeHub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		openStream(w)
		send(w, helloFrame("s"))
		hold(r)
	}, noPost(t))
	out := make(lines, 1000) // room for streams replaced before the cancel lands
	s, _ := testStream(h, out)
	s.idle = 20 * time.Millisecond
	cancel, done := start(t, s)
	recv(t, h.opens)
	is.Equal(recv(t, h.opens).Get("reconnect"), "1") // a silent stream is replaced
	cancel()
	is.NoErr(recv(t, done)) // cancellation stops it cleanly
	is.True(slices.Contains(out.drain(),
		"stream: no bytes for three keepalive intervals; reconnecting in 1s")) // saying why
}
