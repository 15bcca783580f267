package childrun

import (
	"context"
	"net/http"

	"github.com/wharfhub/wharf/hub"
)

// OpenFeed opens a feed as a Session does, through c (whose every
// connection reaches a child), with done standing for the session's end
// and maxEvent bounding one event's data. Backends' tests drive the feed
// reader with it against a scripted child.
func OpenFeed(ctx context.Context, c *http.Client, done <-chan struct{}, maxEvent int, req hub.FeedRequest) (hub.Feed, error) {
	return feedSource{client: c, done: done, maxEvent: maxEvent}.open(ctx, req)
}

// OpenNotifications opens a notification feed as a Session does, through
// c, with done standing for the session's end and maxFrame bounding one
// frame.
func OpenNotifications(ctx context.Context, c *http.Client, done <-chan struct{}, maxFrame int, cursor string) (hub.NotificationFeed, error) {
	return feedSource{client: c, done: done}.openNotifications(ctx, cursor, maxFrame)
}
