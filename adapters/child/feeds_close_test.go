package child_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// Closed is closed: the feed of a conversation closed while it is followed
// says so with one resync, which the Hub relays to every subscriber
// without retrying, then ends.
func TestClosingAConversationEndsItsFeedWithAResync(t *testing.T) {
	is := is.New(t)
	srv, _ := chatServer(t)
	base := srv.URL + "/s/ws/api/chat/"
	_, body := req(t, "POST", base+"conversations", `{"agent":"scripted","title":"Fix it"}`)
	var created struct{ Conversation chat.Summary }
	is.NoErr(json.Unmarshal(body, &created))
	id := created.Conversation.ID

	feed, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+feedURI(t, hub.TopicConversation, id, ""), nil)
	is.NoErr(err)
	resp, err := http.DefaultClient.Do(feed)
	is.NoErr(err)
	defer resp.Body.Close()
	events := childproto.NewEventReader(resp.Body, childproto.MaxEventBytes)
	ev, err := events.Next()
	is.NoErr(err)
	open, err := childproto.DecodeOpen(ev.Data)
	is.NoErr(err) // the head first
	head, err := chat.ParseCursor(open.Cursor)
	is.NoErr(err)

	status, _ := req(t, "POST", base+"conversations/"+url.PathEscape(id)+"/close", `{}`)
	is.Equal(status, 200) // closed
	for {
		ev, err = events.Next()
		is.NoErr(err) // the feed says why it ends
		if ev.Name != childproto.EventData {
			break // past the events the close itself made
		}
		if head, err = chat.ParseCursor(ev.ID); err != nil {
			t.Fatalf("a conversation event with cursor %q: %v", ev.ID, err)
		}
	}
	is.Equal(ev.Name, childproto.EventResync) // a resync
	var resync chat.Event
	is.NoErr(json.Unmarshal(ev.Data, &resync))
	is.Equal(resync, chat.Event{Type: chat.EventResync, Reason: hub.ResyncConversationClosed, ConversationID: id,
		Generation: head.Generation, Sequence: head.Sequence}) // closed, at the last head it sent
	_, err = events.Next()
	is.True(errors.Is(err, io.EOF)) // then the end
}
