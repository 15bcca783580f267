package service_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// The conversation topic's catch-up (hub/live/catchup.go) and its closed
// conversations.

// TestConversationCursorAheadOfTheUpstream joins with a cursor the
// session gave (in a snapshot) before the shared upstream relayed it: the
// joiner's own feed has nothing after it yet, and the joiner is ready
// where the upstream relays its cursor, then gets what follows.
func TestConversationCursorAheadOfTheUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
		e.startApp()
		first := reader(t.Context(), e.open(conversationSub("claude:1", "c0")))
		take(t, first, 1)
		f := e.feed(hub.TopicConversation, "claude:1", 1)
		f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: "c1", Data: chatEvent("c1")})
		take(t, first, 1)

		ahead := reader(t.Context(), e.open(conversationSub("claude:1", "c3")))
		own := e.feed(hub.TopicConversation, "claude:1", 2)
		is.True(silent(ahead)) // the session has nothing after c3 yet
		for _, c := range []string{"c2", "c3", "c4"} {
			f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: chatEvent(c)})
		}
		got := take(t, ahead, 2)
		is.Equal(kinds(got), "ready data") // ready where the upstream relayed its cursor
		is.Equal(got[1].Cursor, "c4")      // then only what follows it
		synctest.Wait()
		is.True(own.IsClosed()) // its own feed is closed
		own.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: "c4", Data: chatEvent("c4")})
		e.clock.Advance(time.Minute)
		is.True(silent(ahead))              // nothing twice, and no resync
		is.Equal(len(take(t, first, 3)), 3) // the other subscriber got everything
	})
}

// A catch-up feed that fails tells its joiner `unavailable` once, and is
// opened again from where the joiner got to.
func TestAFailedCatchUpIsRetriedFromWhereItGot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
		e.startApp()
		take(t, reader(t.Context(), e.open(conversationSub("claude:1", "c0"))), 1)
		f := e.feed(hub.TopicConversation, "claude:1", 1)
		for _, c := range []string{"c8", "c9"} {
			f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: chatEvent(c)})
		}
		old := reader(t.Context(), e.open(conversationSub("claude:1", "c5")))
		own := e.feed(hub.TopicConversation, "claude:1", 2)
		own.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: "c6", Data: chatEvent("c6")})
		own.End(hub.Errorf(hub.Unavailable, "hung up"))
		is.Equal(kinds(take(t, old, 2)), "data unavailable") // what came, then the failure
		e.clock.Advance(time.Second)
		again := e.feed(hub.TopicConversation, "claude:1", 3)
		is.Equal(again.Req.Cursor, "c6") // from where it got
		for _, c := range []string{"c7", "c8"} {
			again.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: chatEvent(c)})
		}
		got := take(t, old, 4)
		is.Equal(kinds(got), "data data data ready")                            // the rest, then ready
		is.Equal(got[0].Cursor+" "+got[1].Cursor+" "+got[2].Cursor, "c7 c8 c9") // once each
	})
}

// Closed is closed: a conversation the session does not have is told once,
// with a resync saying so, and never retried.
func TestAClosedConversationIsToldOnceAndNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		var asked atomic.Int32
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			asked.Add(1)
			return nil, hub.Errorf(hub.NotFound, "unknown conversation")
		})
		e.startApp()
		turns := reader(t.Context(), e.open(conversationSub("claude:nope", "c1")))
		got := take(t, turns, 1)
		is.Equal(kinds(got), "resync") // the session has no such conversation
		is.Equal(string(got[0].Data), `{"generation":"","sequence":0,"conversationId":"claude:nope","type":"resync","reason":"conversation-closed"}`)
		is.Equal(got[0].Cursor, "c1") // the cursor unchanged
		e.clock.Advance(time.Minute)
		is.True(silent(turns))           // said once
		is.Equal(asked.Load(), int32(1)) // and never asked again
	})
}

// A joiner whose conversation went while it caught up is told it is closed.
func TestACatchUpOfAClosedConversationIsToldSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		var opens atomic.Int32
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			if opens.Add(1) > 1 {
				return nil, hub.Errorf(hub.NotFound, "unknown conversation")
			}
			return nil, nil
		})
		e.startApp()
		first := reader(t.Context(), e.open(conversationSub("claude:1", "c0")))
		take(t, first, 1)
		late := reader(t.Context(), e.open(conversationSub("claude:1", "old")))
		got := take(t, late, 1)
		is.Equal(kinds(got), "resync")                                          // told
		is.True(strings.Contains(string(got[0].Data), `"conversation-closed"`)) // that it is closed
	})
}

// resyncEvent is a ChatResyncEvent of claude:1 with reason.
func resyncEvent(reason string) []byte {
	return []byte(`{"generation":"g1","sequence":9,"conversationId":"claude:1","type":"resync","reason":"` + reason + `"}`)
}
