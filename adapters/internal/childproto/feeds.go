package childproto

import (
	"errors"
	"net/url"
	"strings"
	"time"
)

// Feed names one of the child's feeds: the upstream of one live topic.
type Feed string

// The feeds a child serves.
const (
	FeedDocument     Feed = "document"     // the folder's documents (package docfeed)
	FeedActivity     Feed = "activity"     // whether an agent works or awaits an answer
	FeedInventory    Feed = "inventory"    // ticks when the conversations' inventory changes
	FeedConversation Feed = "conversation" // the events of one conversation
)

// The feed endpoints, one per Feed, all Server-Sent Events under
// InternalPrefix.
const (
	// DocumentFeedPath serves FeedDocument: EventState frames for the
	// watch context in the query parameter "key", a LiveDocumentKey.
	DocumentFeedPath = InternalPrefix + "feeds/document"
	// ActivityFeedPath serves FeedActivity: EventActivity frames, an
	// Activity at once and on every change.
	ActivityFeedPath = InternalPrefix + "feeds/activity"
	// InventoryFeedPath serves FeedInventory: EventInventory frames, an
	// InventoryTick at once (the opening tick) and on every change of the
	// conversations' inventory.
	InventoryFeedPath = InternalPrefix + "feeds/inventory"
	// ConversationFeedPath serves FeedConversation: one conversation,
	// named by the query parameter "id", resuming after the optional
	// "cursor".
	ConversationFeedPath = InternalPrefix + "feeds/conversation"
)

// DefaultKeepAlive is the interval of the ": keepalive" comments of every
// feed: a stream that stays quiet longer is known to be dead.
const DefaultKeepAlive = 15 * time.Second

// Path is the feed's endpoint; "" for a feed that is none of the above.
func (f Feed) Path() string {
	switch f {
	case FeedDocument:
		return DocumentFeedPath
	case FeedActivity:
		return ActivityFeedPath
	case FeedInventory:
		return InventoryFeedPath
	case FeedConversation:
		return ConversationFeedPath
	}
	return ""
}

// FeedOfPath is the feed whose endpoint is path, exactly.
func FeedOfPath(path string) (Feed, bool) {
	for _, f := range []Feed{FeedDocument, FeedActivity, FeedInventory, FeedConversation} {
		if f.Path() == path {
			return f, true
		}
	}
	return "", false
}

// FeedRequest is one request of a feed: what the Hub opens, and what the
// child reads from the request's query.
type FeedRequest struct {
	Feed Feed
	// Key is, for FeedDocument, the LiveDocumentKey ("" for the default
	// context) and, for FeedConversation, the conversation id; the other
	// feeds take none.
	Key string
	// Cursor, for FeedConversation only, resumes after the event with this
	// cursor; "" starts at the head.
	Cursor string
}

var (
	// ErrUnknownFeed refuses a Feed that is none of this package's.
	ErrUnknownFeed = errors.New("unknown feed")
	// ErrBadFeedRequest refuses a FeedRequest with a field its feed does
	// not take.
	ErrBadFeedRequest = errors.New("feed request with a field its feed does not take")
	// ErrBadQuery marks every refusal of a feed's query (errors.Is); the
	// error's own message is the child's 400 answer.
	ErrBadQuery = errors.New("bad feed query")
)

// queryError is a refused feed query; its text is the 400 answer's.
type queryError string

func (e queryError) Error() string        { return string(e) }
func (e queryError) Is(target error) bool { return target == ErrBadQuery }

// URI is the path and query of the request, as the Hub sends it: the
// document key is always sent, even empty; a conversation's query has its
// id and, when set, its cursor, escaped by url.Values.Encode. It refuses an
// unknown feed and a field the feed does not take; it does not refuse an
// empty conversation id, which the child answers 400.
func (r FeedRequest) URI() (string, error) {
	switch r.Feed {
	case FeedDocument:
		if r.Cursor != "" {
			return "", ErrBadFeedRequest
		}
		return DocumentFeedPath + "?key=" + url.QueryEscape(r.Key), nil
	case FeedActivity, FeedInventory:
		if r.Key != "" || r.Cursor != "" {
			return "", ErrBadFeedRequest
		}
		return r.Feed.Path(), nil
	case FeedConversation:
		q := url.Values{"id": {r.Key}}
		if r.Cursor != "" {
			q.Set("cursor", r.Cursor)
		}
		return ConversationFeedPath + "?" + q.Encode(), nil
	}
	return "", ErrUnknownFeed
}

// ParseFeedQuery reads the request of feed f from its query q (as
// url.URL.Query returns it). The document feed takes its key at most once;
// a conversation needs exactly one non-empty id and at most one cursor;
// activity and inventory ignore their query. A refusal matches ErrBadQuery
// and its message is the child's 400 answer.
func ParseFeedQuery(f Feed, q url.Values) (FeedRequest, error) {
	r := FeedRequest{Feed: f}
	switch f {
	case FeedDocument:
		keys := q["key"]
		if len(keys) > 1 {
			return FeedRequest{}, queryError("key given more than once")
		}
		if len(keys) == 1 {
			r.Key = keys[0]
		}
	case FeedActivity, FeedInventory:
	case FeedConversation:
		ids, cursors := q["id"], q["cursor"]
		if len(ids) != 1 || ids[0] == "" {
			return FeedRequest{}, queryError("one conversation id required")
		}
		if len(cursors) > 1 {
			return FeedRequest{}, queryError("cursor given more than once")
		}
		r.Key = ids[0]
		if len(cursors) == 1 {
			r.Cursor = cursors[0]
		}
	default:
		return FeedRequest{}, ErrUnknownFeed
	}
	return r, nil
}

// ParseFeedURI reads a feed request from its path and query, as URI
// writes them: the path must be a feed's endpoint exactly and the query
// must parse strictly (url.ParseQuery), then ParseFeedQuery decides.
func ParseFeedURI(uri string) (FeedRequest, error) {
	path, rawQuery, _ := strings.Cut(uri, "?")
	f, ok := FeedOfPath(path)
	if !ok {
		return FeedRequest{}, ErrUnknownFeed
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return FeedRequest{}, queryError("malformed query")
	}
	return ParseFeedQuery(f, q)
}
