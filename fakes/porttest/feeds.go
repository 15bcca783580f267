package porttest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// feeds runs the WorkspaceSession.OpenFeed part of the Backend contract.
// Every wait is bounded by a context with a deadline, and a Next that
// returns the deadline's error counts as one that hung: an ended feed
// must say so on its own.
func feeds(t *testing.T, newBackend func(t *testing.T) (hub.Backend, string),
	start func(t *testing.T, b hub.Backend, id, dir string) hub.WorkspaceSession) {
	activity := hub.FeedRequest{Topic: hub.TopicActivity}

	t.Run("ActivityFeedStartsIdle", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		fr := firstFrame(t, openFeed(t, rs, activity))
		is.Equal(fr.Kind, hub.FrameData) // data at once
		act := jsonObject(t, fr.Data)
		if rev, ok := act["shells"]; ok {
			_, isNumber := rev.(float64)
			is.True(isNumber)     // the shells revision, when sent, is a number
			delete(act, "shells") // (a child before shells sends none)
		}
		is.Equal(act, map[string]any{"working": false, "awaiting": false}) // exactly: no agent works nor awaits
	})

	t.Run("InventoryFeedOpensWithATick", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		fr := firstFrame(t, openFeed(t, rs, hub.FeedRequest{Topic: hub.TopicInventory}))
		is.Equal(fr.Kind, hub.FrameData) // data at once
		tick := jsonObject(t, fr.Data)
		is.Equal(tick["type"], "conversation.inventory") // the opening tick
		catalogs, _ := tick["catalogs"].(map[string]any)
		rev, _ := catalogs[SessionAgent].(string)
		is.Equal(len(tick), 2)     // with the catalogs, nothing else
		is.Equal(len(catalogs), 1) // of the one agent the session knows
		is.True(rev != "")         // its revision
	})

	t.Run("DocumentFeedStartsWithASnapshot", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		key := hub.DocumentContext{CompareTarget: "base"}.String()
		fr := firstFrame(t, openFeed(t, rs, hub.FeedRequest{Topic: hub.TopicDocument, Key: key}))
		is.Equal(fr.Kind, hub.FrameData) // data first
		var snap struct {
			Kind  string `json:"kind"`
			Epoch string `json:"epoch"`
		}
		is.NoErr(json.Unmarshal(fr.Data, &snap)) // a JSON DocumentUpdate
		is.Equal(snap.Kind, "snapshot")          // a snapshot
		is.True(snap.Epoch != "")                // of an epoch
	})

	t.Run("UnknownConversationIsNotFound", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		f, err := rs.OpenFeed(ctx, hub.FeedRequest{Topic: hub.TopicConversation, Key: "no-such-conversation"})
		is.True(f == nil)                       // no feed
		is.Equal(hub.KindOf(err), hub.NotFound) // a conversation the session does not have
		is.True(hub.MessageOf(err) != "")       // with a public reason
	})

	// Every topic of the table: one with a feed opens, with data first,
	// unless its required key names nothing the session has (NotFound);
	// one without a feed is NotFound, however asked.
	t.Run("EveryTopicOfTheTableIsServedOrNotFound", func(t *testing.T) {
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		for _, s := range hub.Topics() {
			t.Run(string(s.Name), func(t *testing.T) {
				is := is.New(t)
				ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
				defer cancel()
				req := hub.FeedRequest{Topic: s.Name} // an optional key left empty is a key
				if s.Key == hub.KeyRequired {
					req.Key = "no-such-key"
				}
				f, err := rs.OpenFeed(ctx, req)
				if !s.Feed || s.Key == hub.KeyRequired {
					is.True(f == nil)                       // no feed
					is.Equal(hub.KindOf(err), hub.NotFound) // of a topic the session does not serve, or of a key it does not have
					return
				}
				is.NoErr(err) // the feed opens
				defer f.Close()
				is.Equal(firstFrame(t, f).Kind, hub.FrameData) // with data at once
			})
		}
	})

	t.Run("NextEndsWithItsContext", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openFeed(t, rs, activity)
		firstFrame(t, f)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := f.Next(ctx)
		is.True(errors.Is(err, context.Canceled)) // the ctx's error, the feed left open
	})

	t.Run("CloseEndsTheFeed", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openFeed(t, rs, activity)
		firstFrame(t, f)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		waiting := make(chan error, 1)
		go func() {
			_, err := f.Next(ctx) // nothing more comes: it waits
			waiting <- err
		}()
		f.Close()
		f.Close() // twice is harmless
		err := <-waiting
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // Close ends a waiting Next at once
		_, err = f.Next(ctx)
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // and every later one
	})

	t.Run("StopEndsOpenFeeds", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openFeed(t, rs, activity)
		firstFrame(t, f)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		is.NoErr(rs.Stop(ctx)) // stop the session
		// A frame the session sent as it stopped (its activity changing)
		// may still be read; then the feed ends.
		var err error
		for range 16 {
			if _, err = f.Next(ctx); err != nil {
				break
			}
		}
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // the open feed ends, promptly
		g, err := rs.OpenFeed(ctx, activity)
		is.True(g == nil)                          // an ended session opens no feed
		is.Equal(hub.KindOf(err), hub.Unavailable) // it is unavailable
	})
}

// openFeed opens req on rs within backendTimeout, failing the test
// otherwise, and closes the feed at the end of the test.
func openFeed(t *testing.T, rs hub.WorkspaceSession, req hub.FeedRequest) hub.Feed {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
	defer cancel()
	f, err := rs.OpenFeed(ctx, req)
	if err != nil {
		t.Fatalf("open the %s feed: %v", req.Topic, err)
	}
	t.Cleanup(f.Close)
	return f
}

// firstFrame returns f's next frame within backendTimeout, failing the
// test otherwise.
func firstFrame(t *testing.T, f hub.Feed) hub.FeedFrame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
	defer cancel()
	fr, err := f.Next(ctx)
	if err != nil {
		t.Fatalf("first frame: %v", err)
	}
	return fr
}

// jsonObject decodes a frame's JSON object, failing the test when it is
// not one.
func jsonObject(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("frame data is not a JSON object: %v", err)
	}
	return v
}
