package childrun_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// liveChild streams, flushed one by one, the events sent on events, until
// its request ends; then it closes gone.
type liveChild struct {
	*upstream
	events chan string
	gone   chan struct{}
}

func newLiveChild(t *testing.T) *liveChild {
	c := &liveChild{events: make(chan string), gone: make(chan struct{})}
	c.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(c.gone)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for {
			select {
			case ev := <-c.events:
				io.WriteString(w, ev)
				http.NewResponseController(w).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	return c
}

// send hands the child one activity event to stream.
func (c *liveChild) send(t *testing.T, working bool) {
	t.Helper()
	ev := "event: data\ndata: {\"working\":false}\n\n"
	if working {
		ev = "event: data\ndata: {\"working\":true}\n\n"
	}
	select {
	case c.events <- ev:
	case <-testContext(t).Done():
		t.Fatal("the child's stream is gone")
	}
}

var activity = hub.FeedRequest{Topic: hub.TopicActivity}

func TestFeedLifetime(t *testing.T) {
	t.Parallel()

	t.Run("Next ends with its ctx and the feed stays open", func(t *testing.T) {
		is := is.New(t)
		c := newLiveChild(t)
		f, err := c.open(t, activity, 1<<10)
		is.NoErr(err) // opened
		ctx, cancel := context.WithCancel(testContext(t))
		cancel()
		_, err = f.Next(ctx)
		is.True(errors.Is(err, context.Canceled)) // the ctx's error
		c.send(t, true)
		fr, err := f.Next(testContext(t))
		is.NoErr(err)                                 // the feed still runs
		is.Equal(string(fr.Data), `{"working":true}`) // and delivers
	})

	t.Run("the feed outlives OpenFeed's ctx", func(t *testing.T) {
		is := is.New(t)
		c := newLiveChild(t)
		ctx, cancel := context.WithCancel(testContext(t))
		f, err := childrun.OpenFeed(ctx, c.client, c.done, 1<<10, activity)
		is.NoErr(err) // opened
		defer f.Close()
		cancel()
		c.send(t, false)
		_, err = f.Next(testContext(t))
		is.NoErr(err) // frames still arrive
	})

	t.Run("Close ends Next and the child's stream", func(t *testing.T) {
		is := is.New(t)
		c := newLiveChild(t)
		f, err := c.open(t, activity, 1<<10)
		is.NoErr(err) // opened
		c.send(t, false)
		f.Close()
		f.Close() // twice is harmless
		_, err = f.Next(testContext(t))
		is.True(err != nil && !errors.Is(err, io.EOF))     // Next fails after Close
		is.True(!errors.Is(err, context.DeadlineExceeded)) // at once
		is.True(waitFor(t, c.gone))                        // and the child sees its request end
	})

	t.Run("Close wakes a waiting Next", func(t *testing.T) {
		is := is.New(t)
		c := newLiveChild(t)
		f, err := c.open(t, activity, 1<<10)
		is.NoErr(err) // opened
		got := make(chan error, 1)
		go func() {
			_, err := f.Next(testContext(t))
			got <- err
		}()
		f.Close()
		select {
		case err := <-got:
			is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // the waiting Next fails
		case <-testContext(t).Done():
			t.Fatal("Next still waits after Close")
		}
	})

	t.Run("the session's end fails the feed", func(t *testing.T) {
		is := is.New(t)
		c := newLiveChild(t)
		f, err := c.open(t, activity, 1<<10)
		is.NoErr(err) // opened
		c.send(t, false)
		_, err = f.Next(testContext(t))
		is.NoErr(err) // a first frame
		close(c.done)
		_, err = f.Next(testContext(t))
		is.Equal(hub.KindOf(err), hub.Unavailable)        // the feed fails
		is.Equal(hub.MessageOf(err), "session has ended") // saying why
		is.True(waitFor(t, c.gone))                       // and lets the child go
	})

	t.Run("opening ends with its ctx", func(t *testing.T) {
		is := is.New(t)
		arrived := make(chan struct{})
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			close(arrived)
			<-r.Context().Done() // never answers
		})
		ctx, cancel := context.WithCancel(testContext(t))
		go func() {
			<-arrived
			cancel()
		}()
		f, err := childrun.OpenFeed(ctx, u.client, u.done, 1<<10, activity)
		is.True(f == nil)                          // no feed
		is.True(errors.Is(err, context.Canceled))  // the ctx's error
		is.Equal(hub.KindOf(err), hub.Unavailable) // as unavailable
	})
}

// waitFor reports whether ch closes within the test's timeout.
func waitFor(t *testing.T, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(testTimeout):
		return false
	}
}
