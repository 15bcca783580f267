package childproto_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

func TestEveryFeedOfTheTopicTableHasAPath(t *testing.T) {
	t.Parallel()
	for _, s := range hub.Topics() {
		t.Run(string(s.Name), func(t *testing.T) {
			is := is.New(t)
			path := childproto.FeedPath(s.Name)
			if !s.Feed {
				is.Equal(path, "") // the Hub answers the topic alone: no child serves it
				_, ok := childproto.FeedOfPath(childproto.FeedsPrefix + string(s.Name))
				is.True(!ok) // nor is its would-be path a feed
				return
			}
			is.Equal(path, "/_wharf/feeds/"+string(s.Name)) // one path per topic, named after it
			got, ok := childproto.FeedOfPath(path)
			is.True(ok)           // the path names its topic
			is.Equal(got, s.Name) // and back
		})
	}
}

func TestFeedRequestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  childproto.FeedRequest
		uri  string
	}{
		{"document, default context", childproto.FeedRequest{Topic: hub.TopicDocument},
			"/_wharf/feeds/document?key="},
		{"document", childproto.FeedRequest{Topic: hub.TopicDocument, Key: "compareTarget=base&scope=file&documentId=%2Fw%2Fa+b.md"},
			"/_wharf/feeds/document?key=compareTarget%3Dbase%26scope%3Dfile%26documentId%3D%252Fw%252Fa%2Bb.md"},
		{"activity", childproto.FeedRequest{Topic: hub.TopicActivity}, "/_wharf/feeds/activity"},
		{"inventory", childproto.FeedRequest{Topic: hub.TopicInventory}, "/_wharf/feeds/inventory"},
		{"conversation", childproto.FeedRequest{Topic: hub.TopicConversation, Key: "c/1&x"},
			"/_wharf/feeds/conversation?key=c%2F1%26x"},
		{"conversation from a cursor", childproto.FeedRequest{Topic: hub.TopicConversation, Key: "c1", Cursor: "eyJ2Ijox=="},
			"/_wharf/feeds/conversation?key=c1&cursor=eyJ2Ijox%3D%3D"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			uri, err := tc.req.URI()
			is.NoErr(err)         // encoded
			is.Equal(uri, tc.uri) // the child's endpoint, every part escaped
			got, err := childproto.ParseFeedURI(uri)
			is.NoErr(err)         // decoded
			is.Equal(got, tc.req) // the request back

			u, err := url.ParseRequestURI(uri)
			is.NoErr(err) // the URI is one an HTTP server reads
			topic, ok := childproto.FeedOfPath(u.Path)
			is.True(ok)                   // its path names a feed
			is.Equal(topic, tc.req.Topic) // the request's
			got, err = childproto.ParseFeedQuery(topic, u.Query())
			is.NoErr(err)         // as the child's handler decodes it
			is.Equal(got, tc.req) // the same request
		})
	}
}

func TestFeedRequestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  childproto.FeedRequest
		want error
	}{
		{"a topic no child serves", childproto.FeedRequest{Topic: hub.TopicWorktrees}, childproto.ErrUnknownFeed},
		{"no topic", childproto.FeedRequest{}, childproto.ErrUnknownFeed},
		{"no such topic", childproto.FeedRequest{Topic: "weather"}, childproto.ErrUnknownFeed},
		{"a key on activity", childproto.FeedRequest{Topic: hub.TopicActivity, Key: "k"}, childproto.ErrBadFeedRequest},
		{"a cursor on inventory", childproto.FeedRequest{Topic: hub.TopicInventory, Cursor: "c"}, childproto.ErrBadFeedRequest},
		{"a cursor on documents", childproto.FeedRequest{Topic: hub.TopicDocument, Cursor: "c"}, childproto.ErrBadFeedRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := tc.req.URI()
			is.True(errors.Is(err, tc.want)) // refused before anything is sent
		})
	}
}

func TestParseFeedURIRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, uri string
		want      error
		message   string
	}{
		{"a topic no child serves", "/_wharf/feeds/worktrees", childproto.ErrUnknownFeed, ""},
		{"no topic", "/_wharf/feeds/", childproto.ErrUnknownFeed, ""},
		{"path with a slash more", "/_wharf/feeds/activity/", childproto.ErrUnknownFeed, ""},
		{"facts", "/_wharf/facts", childproto.ErrUnknownFeed, ""},
		{"two keys", "/_wharf/feeds/document?key=&key=", childproto.ErrBadQuery, "key given more than once"},
		{"a bad escape", "/_wharf/feeds/document?key=%zz", childproto.ErrBadQuery, "malformed query"},
		{"a cursor on documents", "/_wharf/feeds/document?key=&cursor=c", childproto.ErrBadQuery, "the document feed takes only key"},
		{"a key on activity", "/_wharf/feeds/activity?key=x", childproto.ErrBadQuery, "the activity feed takes no parameters"},
		{"an empty key on inventory", "/_wharf/feeds/inventory?key=", childproto.ErrBadQuery, "the inventory feed takes no parameters"},
		{"a cursor on inventory", "/_wharf/feeds/inventory?cursor=c", childproto.ErrBadQuery, "the inventory feed takes no parameters"},
		{"no conversation key", "/_wharf/feeds/conversation", childproto.ErrBadQuery, "the conversation feed needs a key"},
		{"an empty conversation key", "/_wharf/feeds/conversation?key=", childproto.ErrBadQuery, "the conversation feed needs a key"},
		{"only a cursor", "/_wharf/feeds/conversation?cursor=c", childproto.ErrBadQuery, "the conversation feed needs a key"},
		{"two conversation keys", "/_wharf/feeds/conversation?key=a&key=b", childproto.ErrBadQuery, "key given more than once"},
		{"two cursors", "/_wharf/feeds/conversation?key=a&cursor=1&cursor=2", childproto.ErrBadQuery, "cursor given more than once"},
		{"an unknown parameter", "/_wharf/feeds/conversation?key=a&id=a", childproto.ErrBadQuery, "the conversation feed takes only key and cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := childproto.ParseFeedURI(tc.uri)
			is.True(errors.Is(err, tc.want)) // refused
			if tc.message != "" {
				is.Equal(err.Error(), tc.message) // with the child's 400 message
			}
		})
	}
}

func TestParseFeedQueryRefusesATopicNoChildServes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, topic := range []hub.Topic{hub.TopicWorktrees, "weather", ""} {
		_, err := childproto.ParseFeedQuery(topic, url.Values{})
		is.True(errors.Is(err, childproto.ErrUnknownFeed)) // no feed to read a query of
	}
}

func TestAnAbsentDocumentKeyIsTheDefaultContext(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	got, err := childproto.ParseFeedURI("/_wharf/feeds/document")
	is.NoErr(err)                                                   // an absent key
	is.Equal(got, childproto.FeedRequest{Topic: hub.TopicDocument}) // is the default context
	got, err = childproto.ParseFeedURI("/_wharf/feeds/conversation?key=a&cursor=")
	is.NoErr(err)                                                                 // an empty cursor
	is.Equal(got, childproto.FeedRequest{Topic: hub.TopicConversation, Key: "a"}) // starts at the head
	_, ok := childproto.FeedOfPath("/_wharf/feeds/nope")
	is.True(!ok)                              // no feed there
	is.Equal(childproto.FeedPath("nope"), "") // and no path for an unknown topic
}
