package childproto_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

func TestFeedRequestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  childproto.FeedRequest
		uri  string
	}{
		{"document, default context", childproto.FeedRequest{Feed: childproto.FeedDocument},
			"/_wharf/feeds/document?key="},
		{"document", childproto.FeedRequest{Feed: childproto.FeedDocument, Key: "compareTarget=base&scope=file&documentId=%2Fw%2Fa+b.md"},
			"/_wharf/feeds/document?key=compareTarget%3Dbase%26scope%3Dfile%26documentId%3D%252Fw%252Fa%2Bb.md"},
		{"activity", childproto.FeedRequest{Feed: childproto.FeedActivity}, "/_wharf/feeds/activity"},
		{"inventory", childproto.FeedRequest{Feed: childproto.FeedInventory}, "/_wharf/feeds/inventory"},
		{"conversation", childproto.FeedRequest{Feed: childproto.FeedConversation, Key: "c/1&x"},
			"/_wharf/feeds/conversation?id=c%2F1%26x"},
		{"conversation from a cursor", childproto.FeedRequest{Feed: childproto.FeedConversation, Key: "c1", Cursor: "eyJ2Ijox=="},
			"/_wharf/feeds/conversation?cursor=eyJ2Ijox%3D%3D&id=c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			uri, err := tc.req.URI()
			is.NoErr(err)         // encoded
			is.Equal(uri, tc.uri) // the child's endpoint, every part escaped
			got, err := childproto.ParseFeedURI(uri)
			is.NoErr(err)         // decoded
			is.Equal(got, tc.req) // the request back

			f, ok := childproto.FeedOfPath(tc.req.Feed.Path())
			is.True(ok)              // the path names its feed
			is.Equal(f, tc.req.Feed) // and back
			u, err := url.ParseRequestURI(uri)
			is.NoErr(err) // the URI is one an HTTP server reads
			got, err = childproto.ParseFeedQuery(f, u.Query())
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
		{"a topic no child serves", childproto.FeedRequest{Feed: "worktrees"}, childproto.ErrUnknownFeed},
		{"no feed", childproto.FeedRequest{}, childproto.ErrUnknownFeed},
		{"a key on activity", childproto.FeedRequest{Feed: childproto.FeedActivity, Key: "k"}, childproto.ErrBadFeedRequest},
		{"a cursor on inventory", childproto.FeedRequest{Feed: childproto.FeedInventory, Cursor: "c"}, childproto.ErrBadFeedRequest},
		{"a cursor on documents", childproto.FeedRequest{Feed: childproto.FeedDocument, Cursor: "c"}, childproto.ErrBadFeedRequest},
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
		{"unknown path", "/_wharf/feeds/worktrees", childproto.ErrUnknownFeed, ""},
		{"path with a slash more", "/_wharf/feeds/activity/", childproto.ErrUnknownFeed, ""},
		{"facts", "/_wharf/facts", childproto.ErrUnknownFeed, ""},
		{"two keys", "/_wharf/feeds/document?key=&key=", childproto.ErrBadQuery, "key given more than once"},
		{"a bad escape", "/_wharf/feeds/document?key=%zz", childproto.ErrBadQuery, "malformed query"},
		{"no conversation id", "/_wharf/feeds/conversation", childproto.ErrBadQuery, "one conversation id required"},
		{"an empty conversation id", "/_wharf/feeds/conversation?id=", childproto.ErrBadQuery, "one conversation id required"},
		{"two conversation ids", "/_wharf/feeds/conversation?id=a&id=b", childproto.ErrBadQuery, "one conversation id required"},
		{"two cursors", "/_wharf/feeds/conversation?id=a&cursor=1&cursor=2", childproto.ErrBadQuery, "cursor given more than once"},
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

func TestFeedQueriesTheChildIgnores(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	got, err := childproto.ParseFeedURI("/_wharf/feeds/activity?key=x&cursor=y")
	is.NoErr(err)                                                        // activity ignores its query
	is.Equal(got, childproto.FeedRequest{Feed: childproto.FeedActivity}) // entirely
	got, err = childproto.ParseFeedURI("/_wharf/feeds/document")
	is.NoErr(err)                                                        // an absent key
	is.Equal(got, childproto.FeedRequest{Feed: childproto.FeedDocument}) // is the default context
	_, ok := childproto.FeedOfPath("/_wharf/feeds/nope")
	is.True(!ok)                                 // no feed there
	is.Equal(childproto.Feed("nope").Path(), "") // and no path for an unknown feed
}
