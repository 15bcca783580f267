package chat_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

func TestCursorRoundTrip(t *testing.T) {
	is := is.New(t)
	c := chat.Cursor{Generation: "g1", Sequence: 4}
	back, err := chat.ParseCursor(c.String())
	is.NoErr(err)     // our cursors parse
	is.Equal(back, c) // back to themselves
	raw, _ := base64.RawURLEncoding.DecodeString(c.String())
	is.Equal(string(raw), `{"v":1,"g":"g1","s":4}`) // the earlier child's form
	for _, bad := range []string{"", "!!", base64.RawURLEncoding.EncodeToString([]byte(`{"v":2,"g":"g","s":1}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"g":"","s":1}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"g":"g","s":-1}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"g":"g"}`))} {
		_, err := chat.ParseCursor(bad)
		is.True(err != nil) // anything else is refused
	}
}

func TestResumeFromCursor(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	start := rd.cursor
	r.send(id, "go")
	turn := r.turn()
	for range 3 {
		turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: "chunk"})
	}
	rd.until("the third chunk", func(ev event) bool { return ev.Type == chat.EventTextDelta && len(rd.seen) > 5 })
	mid := rd.seen[2].cursor
	gen := rd.seen[0].Generation
	head := rd.cursor
	cur := func(g string, s int64) string { return chat.Cursor{Generation: g, Sequence: s}.String() }

	for _, tc := range []struct {
		name, cursor string
		frames       int    // expected frames, when no resync
		reason       string // the resync's reason, "" for none
	}{
		{"the head", head, 0, ""},
		{"the start", start, len(rd.seen), ""},
		{"the middle", mid, len(rd.seen) - 3, ""},
		{"not a cursor", "garbage", 0, hub.ResyncInvalidCursor},
		{"another generation", cur("other", 1), 0, hub.ResyncGenerationChanged},
		{"ahead of the head", cur(gen, rd.seen[len(rd.seen)-1].Sequence+1), 0, hub.ResyncRetentionGap},
	} {
		b, err := r.m.Events(id, tc.cursor)
		is.NoErr(err) // events answer
		if tc.reason == "" {
			is.True(b.Resync == nil)           // resumed
			is.Equal(len(b.Frames), tc.frames) // with what followed
			continue
		}
		var ev event
		is.NoErr(json.Unmarshal(b.Resync, &ev))                 // a resync event
		is.Equal(ev.Type, "resync")                             // typed resync
		is.Equal(ev.Reason, tc.reason)                          // with its reason
		is.Equal(ev.ConversationID, id)                         // for the conversation
		is.Equal(ev.Generation, gen)                            // at the head's generation
		is.Equal(ev.Sequence, rd.seen[len(rd.seen)-1].Sequence) // and sequence
	}
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
}

func TestReplayLogIsBounded(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	start := r.follow(id).cursor
	r.send(id, "go")
	turn := r.turn()
	chunk := strings.Repeat("y", 1000)
	for range 400 { // 400 KB of deltas: more than 256 KiB
		turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: chunk})
	}
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended
	b, err := r.m.Events(id, start)
	is.NoErr(err)
	var ev event
	is.NoErr(json.Unmarshal(b.Resync, &ev))     // the start fell out of the log
	is.Equal(ev.Reason, hub.ResyncRetentionGap) // a retention gap
	total := 0
	s, _ := r.m.Snapshot(id)
	head, err := chat.ParseCursor(s.Cursor)
	is.NoErr(err)
	head.Sequence -= 200
	b, err = r.m.Events(id, head.String())
	is.NoErr(err)
	is.True(b.Resync == nil) // the recent past is kept
	for _, f := range b.Frames {
		total += len(f.Data)
	}
	is.True(total <= chat.MaxReplayBytes) // within 256 KiB

	a := ofKind(items(t, s), chat.KindAssistantMessage)[0]
	is.Equal(len(a["markdown"].(string)), 400*1000) // the snapshot holds it all
}

func TestGenerationChangesAcrossRestarts(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "stream")
	rd.status(chat.StatusCompleted)
	rd.drain()
	r.m.Close()

	r.m = r.manager() // the child restarts
	list := r.m.List()
	is.Equal(len(list), 1)   // the inventory survived
	is.Equal(list[0].ID, id) // with the conversation
	is.Equal(list[0].Title, "stream")
	b, err := r.m.Events(id, rd.cursor)
	is.NoErr(err)
	var ev event
	is.NoErr(json.Unmarshal(b.Resync, &ev))          // the old cursor cannot resume
	is.Equal(ev.Reason, hub.ResyncGenerationChanged) // a new generation

	// Opening the conversation reopens the session: the agent replays it.
	s, err := r.m.Snapshot(id)
	is.NoErr(err)
	rd2 := &reader{r: r, id: id, cursor: s.Cursor}
	rd2.until("the replayed answer", func(ev event) bool {
		return ev.Type == chat.EventTextDelta && ev.Delta == "world"
	})
	s, _ = r.m.Snapshot(id)
	its := items(t, s)
	is.Equal(len(ofKind(its, chat.KindUserMessage)), 1) // the user's message, once
	is.Equal(ofKind(its, chat.KindUserMessage)[0]["text"], "stream")
	is.Equal(len(ofKind(its, chat.KindAssistantMessage)), 1) // the answer, once
}

// Two callers that need a restarted conversation's session at once (a
// client opening it, another setting its model) reopen it once: the
// history is replayed once, not into the conversation twice.
func TestConcurrentReopensReplayOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		r := newRig(t)
		r.rt.SetAutoplay(true)
		id := r.create()
		rd := r.follow(id)
		r.send(id, "stream")
		rd.status(chat.StatusCompleted)
		r.m.Close()

		r.m = r.manager() // the child restarts
		gate := make(chan struct{})
		r.rt.HoldLoads(gate)
		_, err := r.m.Snapshot(id) // opening it starts the reopen
		is.NoErr(err)
		configured := make(chan error, 1)
		go func() {
			_, err := r.m.SetConfiguration(context.Background(), id, chat.Configuration{Model: "deep"})
			configured <- err
		}()
		synctest.Wait() // both wait on the agent's load
		close(gate)
		is.NoErr(<-configured)    // the model is set
		synctest.Wait()           // and the reopen has ended
		is.Equal(r.rt.Loads(), 1) // after one load
		s, err := r.m.Snapshot(id)
		is.NoErr(err)
		its := items(t, s)
		is.Equal(len(ofKind(its, chat.KindUserMessage)), 1)      // the user's message, once
		is.Equal(len(ofKind(its, chat.KindAssistantMessage)), 1) // the answer, once
	})
}
