package child

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/wharfhub/wharf/adapters/child/docfeed"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// documents serves the document feed of the workspace folder and runs it
// from the first request until stop: a session whose documents nobody
// watches never indexes nor watches its folder (inotify watches are a
// per-user budget), and readiness never waits for indexing. Once started,
// the feed runs for the child's life, so later watchers find it indexed.
type documents struct {
	feed    *docfeed.Feed
	handler http.Handler
	log     *slog.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc // ends Run; nil until started
	ran     chan struct{}      // closed once Run has returned; nil until started
	stopped bool
}

func newDocuments(feed *docfeed.Feed, log *slog.Logger) *documents {
	return &documents{feed: feed, handler: feed.Handler(), log: log}
}

// ServeHTTP starts the feed if it is not running yet and serves the
// request from it; once the child is stopping it answers 503.
func (d *documents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !d.start() {
		childproto.WriteError(w, http.StatusServiceUnavailable, "document feed unavailable")
		return
	}
	d.handler.ServeHTTP(w, r)
}

// start runs the feed unless it runs already, and reports false once stop
// was called.
func (d *documents) start() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return false
	}
	if d.ran == nil {
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		d.cancel, d.ran = cancel, ran
		go func() {
			defer close(ran)
			// Run ends every subscription when it fails, so the streams
			// end and later requests answer 503; the Hub retries.
			if err := d.feed.Run(ctx); err != nil {
				d.log.Warn("document feed stopped", "err", err)
			}
		}()
	}
	return true
}

// stop ends the feed and waits until Run has returned (everything the feed
// started is gone then) or until ctx ends. Requests after stop answer 503.
func (d *documents) stop(ctx context.Context) {
	d.mu.Lock()
	d.stopped = true
	cancel, ran := d.cancel, d.ran
	d.mu.Unlock()
	if ran == nil {
		return
	}
	cancel()
	select {
	case <-ran:
	case <-ctx.Done():
		d.log.Warn("document feed did not stop in time")
	}
}
