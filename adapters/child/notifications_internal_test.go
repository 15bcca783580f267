package child

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// frames decodes what a stream wrote, as the Hub does.
func frames(t *testing.T, body []byte) []hub.NotificationFrame {
	t.Helper()
	r := childproto.NewEventReader(bytes.NewReader(body), childproto.MaxNotificationFrameBytes)
	var out []hub.NotificationFrame
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		fr, err := childproto.DecodeNotificationFrame(ev)
		if err != nil {
			t.Fatalf("a frame the Hub refuses: %v", err)
		}
		out = append(out, fr)
	}
}

// A reader that fell behind what the core keeps meets a gap mid-stream:
// the stream ends there, without the snapshot (which only ever comes
// first), and the Hub reopens from its cursor.
func TestAReaderThatFellBehindIsEnded(t *testing.T) {
	is := is.New(t)
	wake := make(chan struct{})
	event := hub.NotificationFrame{Type: hub.NoticeEvent, Cursor: "e:1", Notification: hub.Notification{
		ID: `["a","a:s","turn-completed","t"]`, ConversationID: "a:s", SourceID: "t", Kind: hub.NotifyTurnCompleted,
		CreatedAt: time.UnixMilli(1).UTC()}}
	var asked []string
	batches := []chat.NoticeBatch{
		{Frames: []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: "e:0", Reason: chat.NoticeInitial, Pending: []hub.Notification{}}}, Cursor: "e:0", Wait: wake},
		{Frames: []hub.NotificationFrame{event}, Cursor: "e:1", Wait: wake},
		{Frames: []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: "e:9", Reason: chat.NoticeGap, Pending: []hub.Notification{}}}, Cursor: "e:9", Wait: wake},
	}
	source := func(cursor string) chat.NoticeBatch {
		asked = append(asked, cursor)
		b := batches[0]
		batches = batches[1:]
		return b
	}
	close(wake) // every wait is over at once
	rec := httptest.NewRecorder()
	s, err := childproto.OpenStream(rec)
	is.NoErr(err)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	streamNotices(ctx, s, source, "", time.Hour)
	is.NoErr(ctx.Err())                         // it ended by itself
	is.Equal(asked, []string{"", "e:0", "e:1"}) // each time from the cursor it had reached
	got := frames(t, rec.Body.Bytes())
	is.Equal(len(got), 3)                  // the snapshot, ready, the event; not the gap
	is.Equal(got[1].Type, hub.NoticeReady) // ready after the snapshot
	is.Equal(got[2], event)                // then the event
}

// A notice the protocol refuses (which the core never makes) is left out
// of a snapshot, not the snapshot itself.
func TestASnapshotLeavesOutWhatCannotBeSent(t *testing.T) {
	is := is.New(t)
	good := hub.Notification{ID: `["a","a:s","question-pending","q"]`, ConversationID: "a:s", SourceID: "q",
		Kind: hub.NotifyQuestionPending, CreatedAt: time.UnixMilli(5).UTC()}
	bad := good
	bad.ConversationID = strings.Repeat("c", childproto.MaxNotificationIDBytes+1)
	rec := httptest.NewRecorder()
	s, err := childproto.OpenStream(rec)
	is.NoErr(err)
	is.NoErr(writeNotices(s, []hub.NotificationFrame{
		{Type: hub.NoticeSnapshot, Cursor: "e:2", Reason: chat.NoticeGap, Pending: []hub.Notification{bad, good}},
		{Type: hub.NoticeEvent, Cursor: "e:3", Notification: bad},
		{Type: hub.NoticeReady, Cursor: "e:3"},
	}))
	is.NoErr(s.Flush())
	got := frames(t, rec.Body.Bytes())
	is.Equal(len(got), 2)                              // the snapshot and ready; the bad event left out
	is.Equal(got[0].Pending, []hub.Notification{good}) // the snapshot keeps what can be sent
	is.Equal(got[1].Type, hub.NoticeReady)
}
