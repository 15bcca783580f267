package childrun_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childrun"
	"github.com/wharfhub/wharf/hub"
)

// upstream is a scripted child answering feed requests with handler; its
// client reaches it whatever the URL's host, as a session's does.
type upstream struct {
	client *http.Client
	done   chan struct{} // stands for the session's end
}

func newUpstream(t *testing.T, handler http.HandlerFunc) *upstream {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return new(net.Dialer).DialContext(ctx, "tcp", srv.Listener.Addr().String())
		},
		DisableKeepAlives: true,
	}
	return &upstream{client: &http.Client{Transport: tr}, done: make(chan struct{})}
}

// open opens a feed of topic with events bounded by maxEvent bytes.
func (u *upstream) open(t *testing.T, req hub.FeedRequest, maxEvent int) (hub.Feed, error) {
	f, err := childrun.OpenFeed(testContext(t), u.client, u.done, maxEvent, req)
	if err == nil {
		t.Cleanup(f.Close)
	}
	return f, err
}

// streamBody answers with an event stream whose body is body, then ends.
func streamBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

// readAll returns every frame of f until its end, and the end's error.
func readAll(t *testing.T, f hub.Feed) ([]hub.FeedFrame, error) {
	var frames []hub.FeedFrame
	for {
		fr, err := f.Next(testContext(t))
		if err != nil {
			return frames, err
		}
		frames = append(frames, fr)
	}
}

func data(s string) hub.FeedFrame { return hub.FeedFrame{Kind: hub.FrameData, Data: []byte(s)} }

func TestFeedParsesEvents(t *testing.T) {
	t.Parallel()
	doc := hub.FeedRequest{Topic: hub.TopicDocument}
	conv := hub.FeedRequest{Topic: hub.TopicConversation, Key: "c1"}
	for _, tc := range []struct {
		name string
		req  hub.FeedRequest
		body string
		want []hub.FeedFrame
	}{
		{"state events, comments skipped", doc,
			": open\n\n: keepalive\n\nevent: data\ndata: {\"kind\":\"snapshot\"}\n\n: keepalive\n\nevent: data\ndata: {\"kind\":\"patch\"}\n\n",
			[]hub.FeedFrame{data(`{"kind":"snapshot"}`), data(`{"kind":"patch"}`)}},
		{"CRLF framing", doc, "event: data\r\ndata: {}\r\n\r\n: keepalive\r\n\r\n",
			[]hub.FeedFrame{data(`{}`)}},
		{"multi-line data joined by LF", doc, "event: data\ndata: {\"a\":\ndata:1}\n\n",
			[]hub.FeedFrame{data("{\"a\":\n1}")}},
		{"unknown events and those of feeds that resume skipped", doc,
			"event: open\ndata: {\"cursor\":\"c\"}\n\nevent: future\ndata: 1\n\ndata: 2\n\nevent: data\ndata: 3\n\n",
			[]hub.FeedFrame{data("3")}},
		{"an unfinished event is dropped", doc, "event: data\ndata: 1\n\nevent: data\ndata: 2\n",
			[]hub.FeedFrame{data("1")}},
		{"activity", hub.FeedRequest{Topic: hub.TopicActivity},
			"event: data\ndata: {\"working\":false,\"awaiting\":false}\n\n",
			[]hub.FeedFrame{data(`{"working":false,"awaiting":false}`)}},
		{"inventory", hub.FeedRequest{Topic: hub.TopicInventory},
			"event: data\ndata: {\"type\":\"conversation.inventory\"}\n\n",
			[]hub.FeedFrame{data(`{"type":"conversation.inventory"}`)}},
		{"conversation: open, data with cursors, resync ends the feed", conv,
			"event: open\ndata: {\"cursor\":\"h0\"}\n\n" +
				"id: c1\nevent: data\ndata: {\"sequence\":1}\n\n" +
				"event: data\nid: c2\ndata: {\"sequence\":2}\n\n" +
				"event: resync\ndata: {\"reason\":\"retention-gap\"}\n\n" +
				"id: c3\nevent: data\ndata: {\"sequence\":3}\n\n",
			[]hub.FeedFrame{
				{Kind: hub.FrameOpen, Cursor: "h0"},
				{Kind: hub.FrameData, Cursor: "c1", Data: []byte(`{"sequence":1}`)},
				{Kind: hub.FrameData, Cursor: "c2", Data: []byte(`{"sequence":2}`)},
				{Kind: hub.FrameResync, Data: []byte(`{"reason":"retention-gap"}`)},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f, err := newUpstream(t, streamBody(tc.body)).open(t, tc.req, 1<<10)
			is.NoErr(err) // opened
			frames, err := readAll(t, f)
			is.Equal(frames, tc.want)       // the frames, in order
			is.True(errors.Is(err, io.EOF)) // then the end, in order
		})
	}
}

func TestFeedFailsOnBrokenStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		topic      hub.Topic
	}{
		{"data that is not JSON", "event: data\ndata: {nope\n\n", hub.TopicDocument},
		{"an open event without a cursor", "event: open\ndata: {}\n\n", hub.TopicConversation},
		{"a conversation event without an id", "event: data\ndata: {}\n\n", hub.TopicConversation},
		{"a document event with an id", "id: nope\nevent: data\ndata: {}\n\n", hub.TopicDocument},
		{"an event over the bound", "event: data\ndata: \"" + strings.Repeat("x", 40) + "\"\n\n", hub.TopicDocument},
		{"data lines over the bound together", "event: data\ndata: " + strings.Repeat("1", 20) +
			"\ndata: " + strings.Repeat("1", 20) + "\n\n", hub.TopicDocument},
		{"a line over the bound", ": " + strings.Repeat("x", 200) + "\n\n", hub.TopicDocument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f, err := newUpstream(t, streamBody(tc.body)).open(t, hub.FeedRequest{Topic: tc.topic, Key: "c1"}, 32)
			is.NoErr(err) // opened
			frames, err := readAll(t, f)
			is.Equal(len(frames), 0)                                                                 // nothing relayed
			is.True(!errors.Is(err, io.EOF))                                                         // the feed fails
			is.Equal(hub.KindOf(err), hub.Unavailable)                                               // as unavailable
			is.True(!strings.Contains(err.Error(), "nope") && !strings.Contains(err.Error(), "xxx")) // never quoting the stream
		})
	}
}

func TestFeedRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  hub.FeedRequest
		want string
	}{
		{"document", hub.FeedRequest{Topic: hub.TopicDocument, Key: "compareTarget=base&scope=file&documentId=%2Fw%2Fa+b.md"},
			"/_wharf/feeds/document?key=compareTarget%3Dbase%26scope%3Dfile%26documentId%3D%252Fw%252Fa%2Bb.md"},
		{"activity", hub.FeedRequest{Topic: hub.TopicActivity}, "/_wharf/feeds/activity"},
		{"inventory", hub.FeedRequest{Topic: hub.TopicInventory}, "/_wharf/feeds/inventory"},
		{"conversation", hub.FeedRequest{Topic: hub.TopicConversation, Key: "c/1&x"}, "/_wharf/feeds/conversation?key=c%2F1%26x"},
		{"conversation from a cursor", hub.FeedRequest{Topic: hub.TopicConversation, Key: "c1", Cursor: "eyJ2Ijox=="},
			"/_wharf/feeds/conversation?key=c1&cursor=eyJ2Ijox%3D%3D"},
		{"a key the topic does not take is left out", hub.FeedRequest{Topic: hub.TopicActivity, Key: "k"}, "/_wharf/feeds/activity"},
		{"a cursor the topic does not take is left out", hub.FeedRequest{Topic: hub.TopicDocument, Key: "", Cursor: "c"},
			"/_wharf/feeds/document?key="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got := make(chan string, 1)
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				got <- r.URL.RequestURI()
				streamBody("")(w, r)
			})
			_, err := u.open(t, tc.req, 1<<10)
			is.NoErr(err)            // opened
			is.Equal(<-got, tc.want) // the child's endpoint, every part escaped
		})
	}
}

func TestFeedRefusals(t *testing.T) {
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
		topic   hub.Topic
		kind    hub.Kind
		message string
	}{
		{"unknown conversation", answer(404, "application/json"), hub.TopicConversation, hub.NotFound, "unknown conversation"},
		{"a feed the child does not serve", answer(404, "application/json"), hub.TopicActivity, hub.NotFound, "the session does not serve the activity feed"},
		{"a topic no child serves", answer(200, "text/event-stream"), hub.TopicWorktrees, hub.NotFound, "the session does not serve the worktrees feed"},
		{"a failing child", answer(503, "application/json"), hub.TopicDocument, hub.Unavailable, "session refused the feed"},
		{"a bad request", answer(400, "application/json"), hub.TopicDocument, hub.Unavailable, "session refused the feed"},
		{"not an event stream", answer(200, "application/json"), hub.TopicDocument, hub.Unavailable, "session refused the feed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f, err := newUpstream(t, tc.handler).open(t, hub.FeedRequest{Topic: tc.topic, Key: "c1"}, 1<<10)
			is.True(f == nil)                                              // no feed
			is.Equal(hub.KindOf(err), tc.kind)                             // the kind the port promises
			is.Equal(hub.MessageOf(err), tc.message)                       // a public message
			is.True(!strings.Contains(err.Error(), "secret-child-detail")) // never quoting the child
		})
	}

	t.Run("an ended session", func(t *testing.T) {
		is := is.New(t)
		u := newUpstream(t, streamBody(""))
		close(u.done)
		_, err := u.open(t, hub.FeedRequest{Topic: hub.TopicActivity}, 1<<10)
		is.Equal(hub.KindOf(err), hub.Unavailable) // unavailable, without asking
	})
}
