package child_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// chatServer serves a child's handler over a conversation core on the
// fake runtime, whose agent plays the scripts.
func chatServer(t *testing.T) (*httptest.Server, *chat.Manager) {
	t.Helper()
	rt := fakes.NewAgentRuntime(chat.AgentDescriptor{ID: "scripted", Name: "Scripted", Availability: chat.AgentAvailable})
	rt.SetAutoplay(true)
	m, err := chat.New(chat.Config{Runtime: rt, Store: &fakes.ConversationStore{}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	srv := httptest.NewServer(child.NewHandler("ws", child.HandlerOptions{Chat: m, KeepAlive: time.Hour}))
	t.Cleanup(srv.Close)
	return srv, m
}

// req sends a request with a raw body and returns the status and body.
func req(t *testing.T, method, u, body string) (int, []byte) {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestChatAPIRefusals(t *testing.T) {
	srv, _ := chatServer(t)
	base := srv.URL + "/s/ws/api/chat/"
	_, body := req(t, "POST", base+"conversations", `{"agent":"scripted"}`)
	var created struct{ Conversation struct{ ID string } }
	if err := json.Unmarshal(body, &created); err != nil || created.Conversation.ID == "" {
		t.Fatalf("create: %s", body)
	}
	cid := url.PathEscape(created.Conversation.ID)
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n tiny"))
	image := func(data string) string { return `{"mimeType":"image/png","data":"` + data + `"}` }
	nine := strings.TrimSuffix(strings.Repeat(image(png)+",", 9), ",")
	huge := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 11<<20)...))
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"unknown field", "POST", "conversations", `{"agent":"scripted","colour":"red"}`, 400},
		{"field name in another case", "POST", "conversations", `{"Agent":"scripted"}`, 400},
		{"field given twice", "POST", "conversations", `{"agent":"nope","agent":"scripted"}`, 400},
		{"not JSON", "POST", "conversations", `{`, 400},
		{"trailing data", "POST", "conversations", `{"agent":"scripted"} {}`, 400},
		{"no body", "POST", "conversations/" + cid + "/cancel", ``, 400},
		{"unknown agent", "POST", "conversations", `{"agent":"nobody"}`, 404},
		{"unknown conversation", "GET", "conversations/scripted:nope", ``, 404},
		{"empty segment", "GET", "conversations//rename", ``, 404},
		{"unknown path", "GET", "nothing", ``, 404},
		{"wrong method", "PUT", "conversations", `{}`, 404},
		{"title too long", "POST", "conversations/" + cid + "/rename", `{"title":"` + strings.Repeat("a", 201) + `"}`, 400},
		{"not base64", "POST", "conversations/" + cid + "/messages", `{"attachments":[{"mimeType":"image/png","data":"%%%"}]}`, 400},
		{"no turn to cancel", "POST", "conversations/" + cid + "/cancel", `{}`, 409},
		{"unknown held message", "DELETE", "conversations/" + cid + "/messages/message:9", ``, 404},
		{"unknown permission", "POST", "conversations/" + cid + "/permissions/r9", `{"choiceId":"allow"}`, 404},
		{"variant", "POST", "conversations/" + cid + "/configuration", `{"model":"fast","variant":"x"}`, 400},
		{"body over 64 KiB", "POST", "conversations/" + cid + "/rename", `{"title":"` + strings.Repeat("a", 70<<10) + `"}`, 413},
		{"blank title at creation", "POST", "conversations", `{"agent":"scripted","title":"   "}`, 400},
		{"blank title", "POST", "conversations/" + cid + "/rename", `{"title":" \t "}`, 400},
		{"a 9th image", "POST", "conversations/" + cid + "/messages", `{"attachments":[` + nine + `]}`, 400},
		{"an image over 10 MiB", "POST", "conversations/" + cid + "/messages", `{"attachments":[` + image(huge) + `]}`, 413},
		{"not an image", "POST", "conversations/" + cid + "/messages", `{"attachments":[` + image(base64.StdEncoding.EncodeToString([]byte("%PDF-1.4"))) + `]}`, 400},
		{"empty message", "POST", "conversations/" + cid + "/messages", `{"text":"  "}`, 400},
		{"rename an unknown conversation", "POST", "conversations/scripted:nope/rename", `{"title":"x"}`, 404},
		{"send to an unknown conversation", "POST", "conversations/scripted:nope/messages", `{"text":"hi"}`, 404},
		{"cancel an unknown conversation", "POST", "conversations/scripted:nope/cancel", `{}`, 404},
		{"close an unknown conversation", "POST", "conversations/scripted:nope/close", `{}`, 404},
		{"unknown question", "POST", "conversations/" + cid + "/questions/r9", `{"action":"cancel"}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body := req(t, tc.method, base+tc.path, tc.body)
			is.Equal(status, tc.status) // the refusal's status
			e, err := childproto.DecodeError(body)
			is.NoErr(err)          // an error body
			is.True(e.Error != "") // with a message
		})
	}
}

func TestChatAPIConversation(t *testing.T) {
	is := is.New(t)
	srv, m := chatServer(t)
	base := srv.URL + "/s/ws/api/chat/"
	status, body := req(t, "GET", base+"agents", "")
	is.Equal(status, 200)                                               // agents listed
	is.True(bytes.Contains(body, []byte(`"availability":"available"`))) // available
	_, body = req(t, "POST", base+"conversations", `{"agent":"scripted","title":"Fix it"}`)
	var created struct{ Conversation chat.Summary }
	is.NoErr(json.Unmarshal(body, &created))
	id := created.Conversation.ID
	is.Equal(created.Conversation.Title, "Fix it") // named

	// The conversation feed: open with the head, then the turn's events.
	feed, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+feedURI(t, hub.TopicConversation, id, ""), nil)
	is.NoErr(err)
	resp, err := http.DefaultClient.Do(feed)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, 200) // the feed opens
	events := childproto.NewEventReader(resp.Body, childproto.MaxEventBytes)
	ev, err := events.Next()
	is.NoErr(err)
	is.Equal(ev.Name, childproto.EventOpen) // the head first

	status, body = req(t, "POST", base+"conversations/"+url.PathEscape(id)+"/messages", `{"text":"`+agentscript.Stream+`","requestId":"r1"}`)
	is.Equal(status, 202) // accepted
	status, again := req(t, "POST", base+"conversations/"+url.PathEscape(id)+"/messages", `{"text":"`+agentscript.Stream+`","requestId":"r1"}`)
	is.Equal(status, 202)                 // a retry answers too
	is.Equal(string(again), string(body)) // the same result
	for {
		ev, err := events.Next()
		is.NoErr(err)                           // events keep coming
		is.Equal(ev.Name, childproto.EventData) // as data frames
		is.True(ev.ID != "")                    // with their cursors
		if bytes.Contains(ev.Data, []byte(`"status":"completed"`)) {
			break
		}
	}
	snap, err := m.Snapshot(id)
	is.NoErr(err)
	is.Equal(len(snap.Items), 4) // the message, the thought, the answer and the usage: once

	// A cursor of another generation is answered with a resync, then the end.
	bad := chat.Cursor{Generation: "other", Sequence: 1}.String()
	resp2, err := http.Get(srv.URL + feedURI(t, hub.TopicConversation, id, bad))
	is.NoErr(err)
	defer resp2.Body.Close()
	ev, err = childproto.NewEventReader(resp2.Body, 1<<20).Next()
	is.NoErr(err)
	is.Equal(ev.Name, childproto.EventResync)                        // a resync
	is.True(bytes.Contains(ev.Data, []byte(`"generation-changed"`))) // saying why
	resp3, err := http.Get(srv.URL + feedURI(t, hub.TopicConversation, "scripted:nope", ""))
	is.NoErr(err)
	resp3.Body.Close()
	is.Equal(resp3.StatusCode, 404) // an unknown conversation has no feed

	status, _ = req(t, "POST", base+"conversations/"+url.PathEscape(id)+"/close", `{}`)
	is.Equal(status, 200) // closed
	_, body = req(t, "GET", base+"conversations", "")
	is.Equal(string(bytes.TrimSpace(body)), `{"conversations":[]}`) // gone from the inventory
}

// stallingBody is a request body that says when it is first read, then
// gives nothing until released (then it ends, short of its length).
type stallingBody struct {
	reading chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *stallingBody) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.reading) })
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// Message bodies are read within one budget per workspace: while one
// large upload is read, another is refused with 429 before it is read,
// small ones still pass, and the budget comes back when the upload ends.
// A body declared past the bound is refused with 413 unread.
func TestChatAPIUploadsAreBoundedPerWorkspace(t *testing.T) {
	is := is.New(t)
	srv, _ := chatServer(t)
	h := srv.Config.Handler
	base := "/s/ws/api/chat/"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", base+"conversations", strings.NewReader(`{"agent":"scripted"}`)))
	var created struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(rec.Body.Bytes(), &created))
	messages := base + "conversations/" + url.PathEscape(created.Conversation.ID) + "/messages"
	send := func(body io.Reader, length int64) int {
		r := httptest.NewRequest("POST", messages, body)
		r.ContentLength = length
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}

	big := &stallingBody{reading: make(chan struct{}), release: make(chan struct{})}
	done := make(chan int, 1)
	go func() { done <- send(big, 100<<20) }()
	select {
	case <-big.reading: // the first upload holds 100 MiB of the budget
	case <-time.After(10 * time.Second):
		t.Fatal("the first upload was never read")
	}
	second := &stallingBody{reading: make(chan struct{}), release: make(chan struct{})}
	close(second.release)
	is.Equal(send(second, 100<<20), 429) // a second one does not fit
	select {
	case <-second.reading:
		t.Fatal("the refused upload was read")
	default:
	}
	is.Equal(send(second, -1), 429)                                          // nor one of unknown length
	is.Equal(send(strings.NewReader(`{"text":"hi"}`), 13), 202)              // a small one does
	is.Equal(send(strings.NewReader(strings.Repeat(" ", 10)), 121<<20), 413) // one declared past the body bound, unread
	close(big.release)
	select {
	case status := <-done:
		is.Equal(status, 400) // the stalled upload ended short
	case <-time.After(10 * time.Second):
		t.Fatal("the first upload did not end")
	}
	third := &stallingBody{reading: make(chan struct{}), release: make(chan struct{})}
	close(third.release)
	is.Equal(send(third, 100<<20), 400) // the budget is back: read (and found short)
}
