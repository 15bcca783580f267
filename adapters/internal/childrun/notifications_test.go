package childrun_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// openNotices opens a notification feed of u from cursor with frames
// bounded by maxFrame bytes.
func (u *upstream) openNotices(t *testing.T, cursor string, maxFrame int) (hub.NotificationFeed, error) {
	f, err := childrun.OpenNotifications(testContext(t), u.client, u.done, maxFrame, cursor)
	if err == nil {
		t.Cleanup(f.Close)
	}
	return f, err
}

// readNotices returns every frame of f until its end, and the end's error.
func readNotices(t *testing.T, f hub.NotificationFeed) ([]hub.NotificationFrame, error) {
	var frames []hub.NotificationFrame
	for {
		fr, err := f.Next(testContext(t))
		if err != nil {
			return frames, err
		}
		frames = append(frames, fr)
	}
}

const (
	initialSnapshot = "event: snapshot\ndata: {\"type\":\"snapshot\",\"cursor\":\"e:0\",\"reason\":\"initial\",\"pending\":[]}\n\n"
	gapSnapshot     = "event: snapshot\ndata: {\"type\":\"snapshot\",\"cursor\":\"e:0\",\"reason\":\"gap\",\"pending\":[]}\n\n"
	readyFrame      = "event: ready\ndata: {\"type\":\"ready\",\"cursor\":\"e:0\"}\n\n"
	turnCompleted   = "event: event\ndata: {\"type\":\"event\",\"cursor\":\"e:1\",\"event\":{\"type\":\"notification\",\"notification\":" +
		"{\"id\":\"[\\\"a\\\",\\\"a:s\\\",\\\"turn-completed\\\",\\\"t\\\"]\",\"conversationId\":\"a:s\",\"sourceId\":\"t\",\"kind\":\"turn-completed\",\"createdAt\":5}}}\n\n"
	resolvedFrame = "event: event\ndata: {\"type\":\"event\",\"cursor\":\"e:2\",\"event\":{\"type\":\"resolved\",\"id\":\"x\",\"conversationId\":\"a:s\"}}\n\n"
)

func TestNotificationFeedReadsFrames(t *testing.T) {
	t.Parallel()
	turn := hub.Notification{ID: `["a","a:s","turn-completed","t"]`, ConversationID: "a:s", SourceID: "t",
		Kind: hub.NotifyTurnCompleted, CreatedAt: time.UnixMilli(5).UTC()}
	for _, tc := range []struct {
		name, cursor, body string
		want               []hub.NotificationFrame
	}{
		{"opened without a cursor", "", ": open\n\n" + initialSnapshot + readyFrame + ": keepalive\n\n" + turnCompleted + resolvedFrame,
			[]hub.NotificationFrame{
				{Type: hub.NoticeSnapshot, Cursor: "e:0", Reason: "initial", Pending: []hub.Notification{}},
				{Type: hub.NoticeReady, Cursor: "e:0"},
				{Type: hub.NoticeEvent, Cursor: "e:1", Notification: turn},
				{Type: hub.NoticeResolved, Cursor: "e:2", Notification: hub.Notification{ID: "x", ConversationID: "a:s"}},
			}},
		{"resumed", "e:0", turnCompleted + readyFrame, []hub.NotificationFrame{
			{Type: hub.NoticeEvent, Cursor: "e:1", Notification: turn},
			{Type: hub.NoticeReady, Cursor: "e:0"},
		}},
		{"a gap", "old:7", gapSnapshot + readyFrame, []hub.NotificationFrame{
			{Type: hub.NoticeSnapshot, Cursor: "e:0", Reason: "gap", Pending: []hub.Notification{}},
			{Type: hub.NoticeReady, Cursor: "e:0"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			asked := make(chan string, 1)
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				asked <- r.URL.RequestURI()
				streamBody(tc.body)(w, r)
			})
			f, err := u.openNotices(t, tc.cursor, 1<<12)
			is.NoErr(err) // opened
			want := "/_wharf/notifications"
			if tc.cursor != "" {
				want += "?cursor=" + strings.ReplaceAll(tc.cursor, ":", "%3A")
			}
			is.Equal(<-asked, want) // from the cursor
			frames, err := readNotices(t, f)
			is.Equal(frames, tc.want)       // the frames, in order
			is.True(errors.Is(err, io.EOF)) // then the end, in order
		})
	}
}

func TestNotificationFeedFailsOnBrokenStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cursor, body string
	}{
		{"an unknown event", "", "event: nope\ndata: {}\n\n"},
		{"a frame that is not the protocol's", "", "event: ready\ndata: {\"type\":\"ready\",\"cursor\":\"e:0\",\"nope\":1}\n\n"},
		{"no snapshot first without a cursor", "", readyFrame},
		{"a gap without a cursor", "", gapSnapshot},
		{"an initial snapshot with a cursor", "e:0", initialSnapshot},
		{"a snapshot after the first frame", "e:0", turnCompleted + gapSnapshot},
		{"a second ready", "e:0", readyFrame + readyFrame},
		{"a frame over the bound", "e:0", "event: ready\ndata: {\"type\":\"ready\",\"cursor\":\"" + strings.Repeat("x", 200) + "\"}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f, err := newUpstream(t, streamBody(tc.body)).openNotices(t, tc.cursor, 128)
			is.NoErr(err) // opened
			frames, err := readNotices(t, f)
			is.True(len(frames) <= 1)                                                                // nothing past the break
			is.True(!errors.Is(err, io.EOF))                                                         // the feed fails
			is.Equal(hub.KindOf(err), hub.Unavailable)                                               // as unavailable
			is.True(!strings.Contains(err.Error(), "nope") && !strings.Contains(err.Error(), "xxx")) // never quoting the stream
		})
	}
}

func TestNotificationFeedRefusals(t *testing.T) {
	t.Parallel()
	answer := func(status int, contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			io.WriteString(w, `{"error":"secret-child-detail"}`)
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"not served", answer(404, "application/json")},
		{"a bad request", answer(400, "application/json")},
		{"a failing child", answer(503, "application/json")},
		{"not an event stream", answer(200, "application/json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f, err := newUpstream(t, tc.handler).openNotices(t, "e:1", 1<<10)
			is.True(f == nil)                                              // no feed
			is.Equal(hub.KindOf(err), hub.Unavailable)                     // a refusing session is unavailable
			is.True(hub.MessageOf(err) != "")                              // with a public message
			is.True(!strings.Contains(err.Error(), "secret-child-detail")) // never quoting the child
		})
	}

	t.Run("a cursor no frame carries", func(t *testing.T) {
		is := is.New(t)
		asked := make(chan struct{}, 1)
		u := newUpstream(t, func(http.ResponseWriter, *http.Request) { asked <- struct{}{} })
		for _, cursor := range []string{strings.Repeat("c", 257), "e 1", "é"} {
			_, err := u.openNotices(t, cursor, 1<<10)
			is.Equal(hub.KindOf(err), hub.Invalid) // refused
		}
		is.Equal(len(asked), 0) // without asking
	})

	t.Run("an ended session", func(t *testing.T) {
		is := is.New(t)
		u := newUpstream(t, streamBody(initialSnapshot))
		close(u.done)
		_, err := u.openNotices(t, "", 1<<10)
		is.Equal(hub.KindOf(err), hub.Unavailable) // unavailable, without asking
	})
}
