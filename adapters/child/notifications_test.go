package child_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// noticeStream reads a notification feed as the Hub does: its frames,
// decoded strictly. Every read ends with the request's deadline.
type noticeStream struct {
	resp   *http.Response
	events *childproto.EventReader
}

// openNotices opens the notification feed with cursor through c (which
// reaches the server whatever the URL's host); the request ends after
// feedWait or with the test.
func openNotices(t *testing.T, c *http.Client, cursor string) *noticeStream {
	t.Helper()
	uri, err := childproto.NotificationsRequest{Cursor: cursor}.URI()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), feedWait)
	t.Cleanup(cancel)
	resp := open(ctx, t, c, uri)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the notification feed answered %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return &noticeStream{resp: resp, events: childproto.NewEventReader(resp.Body, childproto.MaxNotificationFrameBytes)}
}

// next returns the next frame, failing the test on anything else.
func (s *noticeStream) next(t *testing.T) hub.NotificationFrame {
	t.Helper()
	ev, err := s.events.Next()
	if err != nil {
		t.Fatalf("no frame: %v", err)
	}
	fr, err := childproto.DecodeNotificationFrame(ev)
	if err != nil {
		t.Fatalf("a frame the Hub refuses: %v", err)
	}
	return fr
}

// post sends a chat API request and fails the test unless it succeeds.
func post(t *testing.T, u, body string) []byte {
	t.Helper()
	status, b := req(t, "POST", u, body)
	if status/100 != 2 {
		t.Fatalf("POST %s: %d %s", u, status, b)
	}
	return b
}

func TestTheNotificationFeedFollowsTheCore(t *testing.T) {
	is := is.New(t)
	srv, _ := chatServer(t)
	c := clientOf(t, srv)
	feed := openNotices(t, c, "")
	snap := feed.next(t)
	is.Equal(snap, hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: snap.Cursor, Reason: "initial", Pending: []hub.Notification{}}) // a snapshot of nothing first
	is.Equal(feed.next(t), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: snap.Cursor})                                              // then ready

	base := srv.URL + "/s/ws/api/chat/"
	var created struct{ Conversation chat.Summary }
	is.NoErr(json.Unmarshal(post(t, base+"conversations", `{"agent":"scripted"}`), &created))
	id := created.Conversation.ID
	conv := base + "conversations/" + url.PathEscape(id)
	post(t, conv+"/messages", `{"text":"`+agentscript.Permission+`"}`)
	asked := feed.next(t)
	is.Equal(asked.Type, hub.NoticeEvent)                          // the request is announced
	is.Equal(asked.Notification.Kind, hub.NotifyPermissionPending) // as a permission
	is.Equal(asked.Notification.ConversationID, id)                // of the conversation

	post(t, conv+"/permissions/"+url.PathEscape(asked.Notification.SourceID), `{"choiceId":"allow"}`)
	resolved := feed.next(t)
	is.Equal(resolved.Type, hub.NoticeResolved)                                                      // resolved once answered
	is.Equal(resolved.Notification, hub.Notification{ID: asked.Notification.ID, ConversationID: id}) // naming it
	done := feed.next(t)
	is.Equal(done.Notification.Kind, hub.NotifyTurnCompleted) // then the turn completed

	again := openNotices(t, c, done.Cursor)
	is.Equal(again.next(t), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: done.Cursor}) // a cursor it knows resumes, caught up
	again = openNotices(t, c, asked.Cursor)
	is.Equal(again.next(t), resolved) // an older one resumes with what followed
	is.Equal(again.next(t), done)
	is.Equal(again.next(t).Type, hub.NoticeReady)
	gap := openNotices(t, c, "elsewhere:3")
	first := gap.next(t)
	is.Equal(first.Reason, "gap")                                                             // one it does not know is a gap
	is.Equal(gap.next(t), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: first.Cursor}) // then ready
}

// clientOf is a client of srv whatever the URL's host.
func clientOf(t *testing.T, srv *httptest.Server) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "tcp", srv.Listener.Addr().String())
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestTheNotificationFeedRefusesBadQueries(t *testing.T) {
	is := is.New(t)
	srv, _ := chatServer(t)
	for _, q := range []string{"?cursor=a&cursor=b", "?key=x", "?cursor=" + strings.Repeat("c", 300)} {
		status, body := req(t, "GET", srv.URL+childproto.NotificationsPath+q, "")
		is.Equal(status, http.StatusBadRequest) // refused
		_, err := childproto.DecodeError(body)
		is.NoErr(err) // as a JSON error
	}
	status, _ := req(t, "POST", srv.URL+childproto.NotificationsPath, "")
	is.Equal(status, http.StatusNotFound) // only GET
}

func TestTheNotificationFeedEndsWithTheCore(t *testing.T) {
	is := is.New(t)
	srv, m := chatServer(t)
	feed := openNotices(t, clientOf(t, srv), "")
	feed.next(t)
	feed.next(t) // ready
	m.Close()
	_, err := feed.events.Next()
	is.True(errors.Is(err, io.EOF)) // the feed ends in order when the core closes
}

// A child without a core announces nothing: an empty snapshot, ready, and
// keepalives, at one cursor that always resumes; it ends with the server.
func TestTheNotificationFeedOfAChildWithoutAgents(t *testing.T) {
	is := is.New(t)
	base, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	c := serve(t, child.NewHandler("alpha", child.HandlerOptions{KeepAlive: time.Millisecond}), base)
	feed := openNotices(t, c, "")
	snap := feed.next(t)
	is.Equal(snap.Type, hub.NoticeSnapshot) // a snapshot
	is.Equal(len(snap.Pending), 0)          // of nothing
	is.Equal(feed.next(t).Type, hub.NoticeReady)

	again := openNotices(t, c, snap.Cursor)
	is.Equal(again.next(t), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: snap.Cursor}) // its cursor resumes
	s := readStream(again.resp.Body)
	is.Equal(s.next(t).comment, "keepalive") // then keepalives
	stopServer()
	is.NoErr(s.end(t)) // and the stream ends with the server, in order
}
