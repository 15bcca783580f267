package service_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

func docSub(key, cursor string) hub.Subscription {
	return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicDocument, Key: key, Keyed: true}, Cursor: cursor}
}

func inventorySub(cursor string) hub.Subscription {
	return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicInventory}, Cursor: cursor}
}

func conversationSub(id, cursor string) hub.Subscription {
	return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicConversation, Key: id, Keyed: true}, Cursor: cursor}
}

// startApp starts app's session.
func (e *liveEnv) startApp() {
	e.t.Helper()
	if _, err := e.StartWorkspace(e.ctx, e.app); err != nil {
		e.t.Fatalf("start: %v", err)
	}
}

// feed waits for the n-th feed of app for topic and key.
func (e *liveEnv) feed(topic hub.Topic, key string, n int) *fakes.Feed {
	e.t.Helper()
	synctest.Wait()
	f, err := e.backend.WaitFeed(e.t.Context(), e.app, topic, key, n)
	if err != nil {
		e.t.Fatalf("feed %d of %s: %v", n, topic, err)
	}
	return f
}

var folderCtx = hub.DocumentContext{CompareTarget: "base"}

const folderKey = "compareTarget=base&scope=folder"

func kinds(envs []live.Envelope) string {
	var out []string
	for _, e := range envs {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, " ")
}

func TestDocumentTopic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		first := reader(t.Context(), e.open(docSub("", "")))
		got := take(t, first, 2)
		is.Equal(kinds(got), "data ready")                                  // a joiner gets a snapshot, then ready
		is.True(strings.Contains(string(got[0].Data), `"kind":"snapshot"`)) // the snapshot
		is.True(got[0].Keyed && got[0].Key == "")                           // the client's empty key is echoed
		head := got[0].Cursor
		is.True(head != "") // and a cursor

		f := e.feed(hub.TopicDocument, folderKey, 1)
		epoch := epochOf(t, got[0].Data)
		f.Send(hub.FeedFrame{Data: fakes.DocPatch("/app", epoch, 0, 2, folderCtx, []fakes.Doc{{Path: "a.md", Revision: 1}})})
		got = take(t, first, 1)
		is.Equal(kinds(got), "data")                                     // a caught-up subscriber gets the patch
		is.True(strings.Contains(string(got[0].Data), `"kind":"patch"`)) // as the child sent it
		is.True(got[0].Cursor != head)                                   // under a new cursor
		head = got[0].Cursor

		spelled := reader(t.Context(), e.open(docSub("scope=folder&compareTarget=base", "")))
		got = take(t, spelled, 2)
		is.Equal(kinds(got), "data ready")                                    // another spelling of the context joins
		is.True(strings.Contains(string(got[0].Data), `"a.md"`))              // with the patch materialized
		is.Equal(got[0].Cursor, head)                                         // at the head
		is.Equal(got[0].Key, "scope=folder&compareTarget=base")               // echoing its own spelling
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicDocument, folderKey), 1) // on the one upstream

		caught := reader(t.Context(), e.open(docSub("", head)))
		is.Equal(kinds(take(t, caught, 1)), "ready") // a cursor at the head is owed nothing

		other := reader(t.Context(), e.open(docSub("compareTarget=last-commit", "")))
		is.Equal(kinds(take(t, other, 2)), "data ready")                                                     // another context
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicDocument, "compareTarget=last-commit&scope=folder"), 1) // has its own upstream
	})
}

// epochOf reads a DocumentUpdate's epoch.
func epochOf(t *testing.T, update []byte) string {
	t.Helper()
	_, rest, ok := strings.Cut(string(update), `"epoch":"`)
	epoch, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("no epoch in %s", update)
	}
	return epoch
}

func TestAStoppedWorkspaceIsUnavailableUntilItStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		turns := reader(t.Context(), e.open(docSub("", "")))
		got := take(t, turns, 1)
		is.Equal(kinds(got), "unavailable") // at once
		e.clock.Advance(time.Minute)
		is.True(silent(turns))                                                // once per episode
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicDocument, folderKey), 0) // no attempt while stopped

		e.startApp()
		is.Equal(kinds(take(t, turns, 2)), "data ready") // the start reopens at once: fresh data, then ready

		_, err := e.StopWorkspace(e.ctx, e.app)
		is.NoErr(err)
		is.Equal(kinds(take(t, turns, 1)), "unavailable") // a stop is unavailable again
	})
}

func TestAFailedUpstreamIsRetriedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		turns := reader(t.Context(), e.open(inventorySub("")))
		is.Equal(kinds(take(t, turns, 2)), "data ready") // the opening tick

		var attempts atomic.Int32
		e.backend.SetFeedOpener(e.app, hub.TopicInventory, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			attempts.Add(1)
			return nil, hub.Errorf(hub.Unavailable, "refused")
		})
		e.feed(hub.TopicInventory, "", 1).End(errors.New("child hung up"))
		is.Equal(kinds(take(t, turns, 1)), "unavailable") // the failure

		// Attempts 1 s after the failure, then 2 s, 4 s, 8 s, 15 s and 15 s
		// after each other.
		for i, d := range []time.Duration{1, 2, 4, 8, 15, 15} {
			e.clock.Advance(d*time.Second - time.Millisecond)
			synctest.Wait()
			is.Equal(attempts.Load(), int32(i)) // no attempt before the delay
			e.clock.Advance(time.Millisecond)
			synctest.Wait()
			is.Equal(attempts.Load(), int32(i+1)) // one attempt at it
		}
		is.True(silent(turns)) // retries that keep failing send nothing more

		e.backend.SetFeedOpener(e.app, hub.TopicInventory, nil)
		e.clock.Advance(upstreamRetryMax)
		is.Equal(kinds(take(t, turns, 2)), "data ready")                // the recovery: fresh data, then ready
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicInventory, ""), 2) // on the second successful open
	})
}

const upstreamRetryMax = 15 * time.Second

func TestAnUpstreamLingersAfterItsLastSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		s := e.open(inventorySub(""))
		f := e.feed(hub.TopicInventory, "", 1)
		remove := hub.SubscriptionChange{Remove: []hub.SubKey{{Topic: hub.TopicInventory}}}
		is.NoErr(e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), remove)) // the last subscriber leaves
		e.clock.Advance(2 * time.Second)
		synctest.Wait()
		is.True(!f.IsClosed()) // the upstream lingers

		add := hub.SubscriptionChange{Add: []hub.Subscription{inventorySub("")}}
		is.NoErr(e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), add)) // back within the linger
		e.clock.Advance(time.Hour)
		synctest.Wait()
		is.True(!f.IsClosed())                                          // reuses it
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicInventory, ""), 1) // without a new open

		s.Close()
		e.clock.Advance(3*time.Second - time.Millisecond)
		synctest.Wait()
		is.True(!f.IsClosed()) // not released before 3 s
		e.clock.Advance(time.Millisecond)
		synctest.Wait()
		is.True(f.IsClosed()) // released after
	})
}

func TestInventoryTicksCollapse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		first := reader(t.Context(), e.open(inventorySub("")))
		got := take(t, first, 2)
		is.Equal(kinds(got), "data ready") // the opening tick, once
		old := got[0].Cursor

		f := e.feed(hub.TopicInventory, "", 1)
		f.Send(hub.FeedFrame{Data: []byte(`{"type":"conversation.inventory","catalogs":{"a":"2"}}`)})
		f.Send(hub.FeedFrame{Data: []byte(`{"type":"conversation.inventory","catalogs":{"a":"3"}}`)})
		got = take(t, first, 2)
		head := got[1].Cursor

		behind := reader(t.Context(), e.open(inventorySub(old)))
		got = take(t, behind, 2)
		is.Equal(kinds(got), "data ready")                                                      // a cursor behind gets one tick
		is.Equal(string(got[0].Data), `{"type":"conversation.inventory","catalogs":{"a":"3"}}`) // the latest
		at := reader(t.Context(), e.open(inventorySub(head)))
		is.Equal(kinds(take(t, at, 1)), "ready") // a cursor at the head gets ready only
	})
}

func TestConversationReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(req hub.FeedRequest) ([]hub.FeedFrame, error) {
			if req.Cursor != "" {
				return nil, nil
			}
			return []hub.FeedFrame{{Kind: hub.FrameOpen, Cursor: "c0"}}, nil
		})
		e.startApp()
		first := reader(t.Context(), e.open(conversationSub("claude:1", "")))
		is.Equal(kinds(take(t, first, 1)), "ready") // a fresh conversation is ready at once
		f := e.feed(hub.TopicConversation, "claude:1", 1)
		for _, c := range []string{"c1", "c2", "c3"} {
			f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: chatEvent(c)})
		}
		got := take(t, first, 3)
		is.Equal(got[2].Cursor, "c3") // events carry the child's cursors

		replay := reader(t.Context(), e.open(conversationSub("claude:1", "c1")))
		got = take(t, replay, 3)
		is.Equal(kinds(got), "data data ready")                                    // a cursor in the log replays what followed it
		is.Equal(got[0].Cursor+" "+got[1].Cursor, "c2 c3")                         // in order
		is.Equal(e.backend.FeedOpens(e.app, hub.TopicConversation, "claude:1"), 1) // from the shared upstream

		lost := reader(t.Context(), e.open(conversationSub("claude:1", "gone")))
		own := e.feed(hub.TopicConversation, "claude:1", 2)
		is.Equal(own.Req.Cursor, "gone") // a cursor the Hub cannot place is the session's to judge
		is.True(silent(lost))            // and nothing is said before it does
		own.Send(hub.FeedFrame{Kind: hub.FrameResync, Data: resyncEvent("invalid-cursor")})
		got = take(t, lost, 1)
		is.Equal(kinds(got), "resync")                                     // the session's answer
		is.True(strings.Contains(string(got[0].Data), `"invalid-cursor"`)) // carries its reason
		synctest.Wait()
		is.True(own.IsClosed()) // and the joiner's own feed is closed

		f.Send(hub.FeedFrame{Kind: hub.FrameResync, Data: []byte(`{"generation":"g2","sequence":0,"conversationId":"claude:1","type":"resync","reason":"conversation-rewritten"}`)})
		got = take(t, first, 1)
		is.Equal(kinds(got), "resync")                                           // the workspace's resync
		is.True(strings.Contains(string(got[0].Data), "conversation-rewritten")) // carries its event
		is.Equal(kinds(take(t, replay, 1)), "resync")                            // to every subscriber
		is.True(silent(lost))                                                    // a detached one hears nothing more
	})
}

func TestConversationLogIsByteBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
		e.startApp()
		turns := reader(t.Context(), e.open(conversationSub("claude:1", "")))
		take(t, turns, 1)
		f := e.feed(hub.TopicConversation, "claude:1", 1)
		for i := range 6 {
			c := "c" + string(rune('0'+i))
			big := `{"generation":"g1","sequence":1,"conversationId":"claude:1","type":"item.text_delta","itemId":"i1","delta":"` + strings.Repeat("x", 64<<10) + `"}`
			f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: []byte(big)})
		}
		take(t, turns, 6)
		is.Equal(kinds(take(t, reader(t.Context(), e.open(conversationSub("claude:1", "c3"))), 3)), "data data ready") // kept

		evicted := reader(t.Context(), e.open(conversationSub("claude:1", "c0")))
		own := e.feed(hub.TopicConversation, "claude:1", 2) // evicted past 256 KiB: the session replays it
		for _, c := range []string{"c1", "c2", "c3", "c4"} {
			own.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: c, Data: chatEvent(c)})
		}
		got := take(t, evicted, 6)
		is.Equal(kinds(got), "data data data data data ready") // its replay up to the log, the rest from the log, then ready
		var cursors []string
		for _, env := range got {
			cursors = append(cursors, env.Cursor)
		}
		is.Equal(strings.Join(cursors, " "), "c1 c2 c3 c4 c5 c5") // each event once, in order
		synctest.Wait()
		is.True(own.IsClosed()) // its own feed closed where the two met
		is.True(silent(evicted))
	})
}

func TestAStalledReaderHoldsOneSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		s := e.open(docSub("", "")) // nobody reads yet
		f := e.feed(hub.TopicDocument, folderKey, 1)
		synctest.Wait()
		pad := strings.Repeat("p", 64<<10)
		for i := range 40 { // 2.5 MiB of snapshots, past the backlog bound
			f.Send(hub.FeedFrame{Data: fakes.DocSnapshot("/app", "e2", int64(i+1), folderCtx, fakes.Doc{Path: pad})})
		}
		synctest.Wait()
		turns := reader(t.Context(), s)
		got := take(t, turns, 2)
		is.Equal(kinds(got), "data ready")                              // the stream is still open, holding one snapshot
		is.True(strings.Contains(string(got[0].Data), `"revision":40`)) // the newest
		is.True(silent(turns))                                          // and nothing else
	})
}

// chatEvent is a valid ChatEvent for the cursor c.
func chatEvent(c string) []byte {
	return []byte(`{"generation":"g1","sequence":1,"conversationId":"claude:1","type":"item.remove","itemId":"` + c + `"}`)
}

// A new session is a new chance: its upstreams retry from the shortest
// delay, however long the backoff grew against the session before, so a
// page follows a restarted workspace within a second of its serving.
func TestANewSessionRetriesItsUpstreamsFromTheShortestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		e.startApp()
		turns := reader(t.Context(), e.open(inventorySub("")))
		is.Equal(kinds(take(t, turns, 2)), "data ready") // the opening tick

		var attempts atomic.Int32
		e.backend.SetFeedOpener(e.app, hub.TopicInventory, func(hub.FeedRequest) ([]hub.FeedFrame, error) {
			attempts.Add(1)
			return nil, hub.Errorf(hub.Unavailable, "refused")
		})
		e.feed(hub.TopicInventory, "", 1).End(errors.New("child hung up"))
		is.Equal(kinds(take(t, turns, 1)), "unavailable") // the failure
		for _, d := range []time.Duration{1, 2, 4, 8} {
			e.clock.Advance(d * time.Second)
			synctest.Wait()
		}
		is.Equal(attempts.Load(), int32(4)) // the backoff has grown to 15 s

		_, err := e.StopWorkspace(e.ctx, e.app)
		is.NoErr(err)
		e.startApp() // a new session, whose feed is not served yet either
		synctest.Wait()
		is.Equal(attempts.Load(), int32(5)) // its start tried at once
		e.backend.SetFeedOpener(e.app, hub.TopicInventory, nil)
		e.clock.Advance(time.Second)
		synctest.Wait()
		is.Equal(attempts.Load(), int32(5))              // (the opener counts refusals only)
		is.Equal(kinds(take(t, turns, 2)), "data ready") // and a second later it follows the new session
	})
}
