package childproto

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The feeds are the child's side of the live topics: the child serves one
// feed of every topic the Hub's table marks as a feed (hub.TopicSpec.Feed),
// and this file derives everything of a feed's request from that table,
// naming no topic itself. A topic's feed is at FeedPath, one path per
// topic; its query has the parameter "key" exactly when the topic is keyed
// and "cursor" only when its feed resumes from one; nothing else.

// FeedsPrefix starts the path of every feed: FeedsPrefix + the topic.
const FeedsPrefix = InternalPrefix + "feeds/"

// DefaultKeepAlive is the interval of the ": keepalive" comments of every
// feed: a stream that stays quiet longer is known to be dead.
const DefaultKeepAlive = 15 * time.Second

// feedSpec is the table's entry of topic t when a child serves a feed of
// it.
func feedSpec(t hub.Topic) (hub.TopicSpec, bool) {
	s, ok := hub.LookupTopic(t)
	return s, ok && s.Feed
}

// FeedPath is the endpoint of topic t's feed; "" when no child serves a
// feed of t.
func FeedPath(t hub.Topic) string {
	if _, ok := feedSpec(t); !ok {
		return ""
	}
	return FeedsPrefix + string(t)
}

// FeedOfPath is the topic whose feed's endpoint is path, exactly.
func FeedOfPath(path string) (hub.Topic, bool) {
	name, ok := strings.CutPrefix(path, FeedsPrefix)
	if !ok {
		return "", false
	}
	if _, ok := feedSpec(hub.Topic(name)); !ok {
		return "", false
	}
	return hub.Topic(name), true
}

// FeedRequest is one request of a feed: what the Hub opens, and what the
// child reads from the request's query.
type FeedRequest struct {
	// Topic is the topic whose feed is asked for.
	Topic hub.Topic
	// Key is the subscription's key when the topic is keyed (for the
	// document feed the LiveDocumentKey, "" for the default context; for a
	// conversation its id); "" otherwise.
	Key string
	// Cursor, for a feed that resumes, continues after the event with this
	// cursor; "" starts at the head.
	Cursor string
}

var (
	// ErrUnknownFeed refuses a topic no child serves a feed of.
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

// URI is the path and query of the request, as the Hub sends it: a keyed
// topic's key is always sent, even empty, then the cursor when set, each
// escaped. It refuses a topic no child serves and a field the feed does
// not take; it does not refuse a required key left empty, which the child
// answers 400.
func (r FeedRequest) URI() (string, error) {
	s, ok := feedSpec(r.Topic)
	switch {
	case !ok:
		return "", ErrUnknownFeed
	case r.Key != "" && !s.Keyed(), r.Cursor != "" && !s.Resumes():
		return "", ErrBadFeedRequest
	}
	var q []string
	if s.Keyed() {
		q = append(q, "key="+url.QueryEscape(r.Key))
	}
	if r.Cursor != "" {
		q = append(q, "cursor="+url.QueryEscape(r.Cursor))
	}
	uri := FeedsPrefix + string(r.Topic)
	if len(q) > 0 {
		uri += "?" + strings.Join(q, "&")
	}
	return uri, nil
}

// ParseFeedQuery reads the request of topic t's feed from its query q (as
// url.URL.Query returns it). It takes "key" only when t is keyed, at most
// once, and requires it non-empty when the key is required; "cursor" only
// when t's feed resumes, at most once; and no other parameter. A refusal
// matches ErrBadQuery and its message is the child's 400 answer; a topic
// no child serves is ErrUnknownFeed.
func ParseFeedQuery(t hub.Topic, q url.Values) (FeedRequest, error) {
	s, ok := feedSpec(t)
	if !ok {
		return FeedRequest{}, ErrUnknownFeed
	}
	for name := range q {
		if !(name == "key" && s.Keyed()) && !(name == "cursor" && s.Resumes()) {
			return FeedRequest{}, queryError("the " + string(t) + " feed takes " + parameters(s))
		}
	}
	keys, cursors := q["key"], q["cursor"]
	switch {
	case len(keys) > 1:
		return FeedRequest{}, queryError("key given more than once")
	case s.Key == hub.KeyRequired && (len(keys) == 0 || keys[0] == ""):
		return FeedRequest{}, queryError("the " + string(t) + " feed needs a key")
	case len(cursors) > 1:
		return FeedRequest{}, queryError("cursor given more than once")
	}
	r := FeedRequest{Topic: t}
	if len(keys) == 1 {
		r.Key = keys[0]
	}
	if len(cursors) == 1 {
		r.Cursor = cursors[0]
	}
	return r, nil
}

// parameters says which parameters the feed of s takes.
func parameters(s hub.TopicSpec) string {
	switch {
	case s.Keyed() && s.Resumes():
		return "only key and cursor"
	case s.Keyed():
		return "only key"
	case s.Resumes():
		return "only cursor"
	}
	return "no parameters"
}

// ParseFeedURI reads a feed request from its path and query, as URI
// writes them: the path must be a feed's endpoint exactly and the query
// must parse strictly (url.ParseQuery), then ParseFeedQuery decides.
func ParseFeedURI(uri string) (FeedRequest, error) {
	path, rawQuery, _ := strings.Cut(uri, "?")
	t, ok := FeedOfPath(path)
	if !ok {
		return FeedRequest{}, ErrUnknownFeed
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return FeedRequest{}, queryError("malformed query")
	}
	return ParseFeedQuery(t, q)
}
