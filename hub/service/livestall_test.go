package service_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// bigChatEvent is a ChatEvent of about n bytes for the cursor c.
func bigChatEvent(c string, n int) []byte {
	return []byte(`{"generation":"g1","sequence":1,"conversationId":"claude:1","type":"item.text_delta","itemId":"` + c +
		`","delta":"` + strings.Repeat("x", n) + `"}`)
}

// conversationStream opens a stream following claude:1 on a running app,
// nobody reading it yet, and returns it with the conversation's feed.
func (e *liveEnv) conversationStream(t *testing.T) (*live.Stream, func(cursor string, data []byte)) {
	t.Helper()
	e.backend.SetFeedOpener(e.app, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
	e.startApp()
	s := e.open(conversationSub("claude:1", "c0"))
	f := e.feed(hub.TopicConversation, "claude:1", 1)
	return s, func(cursor string, data []byte) {
		f.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: cursor, Data: data})
		synctest.Wait()
	}
}

// ended reports whether s has ended.
func ended(s *live.Stream) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// The case: an answer of 8 MiB reaches a client reading at full
// speed, the next events arriving before the writer took the frame. The
// frame is never the reason its stream ends.
func TestABigFrameDoesNotEndAStreamThatReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t)
		send("c1", bigChatEvent("c1", 8<<20))
		for _, c := range []string{"c2", "c3", "c4"} {
			send(c, chatEvent(c))
		}
		is.True(!ended(s)) // still open, the frame unsent
		send("c5", bigChatEvent("c5", 8<<20))
		send("c6", chatEvent("c6"))
		is.True(!ended(s)) // and with a second big frame waiting behind it, as long as no time passes

		got := take(t, reader(t.Context(), s), 7)
		is.Equal(kinds(got), "ready data data data data data data") // everything arrives
		is.Equal(got[6].Cursor, "c6")                               // in order
	})
}

func TestAStalledStreamIsEndedAfterTheStallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t) // nobody reads
		for i := range 3 {
			send("c"+string(rune('1'+i)), bigChatEvent("c", 600<<10))
		}
		is.True(!ended(s)) // over the backlog bound, but not for long
		e.clock.Advance(live.StallTimeout - time.Second)
		is.True(!ended(s)) // nor yet long enough
		e.clock.Advance(time.Second)
		synctest.Wait()
		is.True(ended(s)) // no progress for the stall timeout: ended, with nothing more sent
		err := s.Next(e.ctx, func([]live.Envelope, bool) error { return nil })
		is.True(errors.Is(err, live.ErrEnded)) // and its writer learns it
	})
}

func TestAStreamUnderTheBacklogBoundIsNeverStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t) // nobody reads
		send("c1", bigChatEvent("c1", 8<<20))
		send("c2", bigChatEvent("c2", 900<<10))
		e.clock.Advance(time.Hour)
		send("c3", chatEvent("c3"))
		is.True(!ended(s)) // one big frame and less than the bound behind it wait as long as they must
	})
}

// A client reading a big batch slowly reports progress as it goes; while it
// does, what piles up behind it does not end it, up to live.MaxHeld.
func TestAWriterThatProgressesIsNotStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t)
		send("c1", bigChatEvent("c1", 4<<20))
		writing, progress, release := make(chan struct{}), make(chan bool), make(chan struct{})
		go s.Next(t.Context(), func([]live.Envelope, bool) error {
			close(writing)
			for more := range progress { // a slow client, piece by piece
				if more {
					s.Progress()
				}
			}
			<-release
			return nil
		})
		<-writing
		for i := range 4 {
			send("c"+string(rune('2'+i)), bigChatEvent("c", 600<<10))
		}
		for range 6 { // a minute with progress every 5 s
			e.clock.Advance(5 * time.Second)
			progress <- true
			synctest.Wait()
		}
		is.True(!ended(s)) // holding 1.8 MiB for a minute, but progressing
		close(progress)
		e.clock.Advance(live.StallTimeout)
		synctest.Wait()
		is.True(ended(s)) // no progress since: ended
		close(release)
	})
}

func TestAStreamTooFarBehindIsEndedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t) // nobody reads
		for i := range live.MaxHeld/(8<<20) + 1 {
			is.True(!ended(s)) // not yet
			send("c"+string(rune('a'+i)), bigChatEvent("c", 8<<20))
		}
		send("cz", chatEvent("cz"))
		is.True(ended(s)) // more than live.MaxHeld behind its head, with no time passing
	})
}

// A subscription change waits for the batch being written, so nothing of
// a removed subscription follows its answer: while the writer progresses,
// for up to 30 s; a writer with no progress for 5 s ends its stream.
func TestAChangeWaitsForAWriterThatProgresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s, send := e.conversationStream(t)
		send("c1", bigChatEvent("c1", 4<<20))
		writing, progress := make(chan struct{}), make(chan struct{})
		go s.Next(t.Context(), func([]live.Envelope, bool) error {
			close(writing)
			for range progress {
				s.Progress()
			}
			return nil
		})
		<-writing
		answered := make(chan error, 1)
		go func() {
			answered <- e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), hub.SubscriptionChange{Add: []hub.Subscription{worktrees()}})
		}()
		for range 3 { // 12 s of a slow client
			e.clock.Advance(4 * time.Second)
			progress <- struct{}{}
			synctest.Wait()
		}
		select {
		case err := <-answered:
			t.Fatalf("answered %v while the batch was still being written", err)
		default:
		}
		close(progress)      // the batch is written
		is.NoErr(<-answered) // and the change answers
		is.True(!ended(s))   // on a stream still open
	})
}
