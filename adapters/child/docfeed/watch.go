package docfeed

import (
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// collector drains the watcher on its own goroutine, so a loop busy with a
// scan or a git command never lets the kernel's event queue overflow. It
// only records which paths to look at and when; the loop decides what
// changed.
type collector struct {
	mu          sync.Mutex
	dirty       map[string]fsnotify.Op
	first, last time.Time
	// failed records a watcher error since the last take (an overflowed
	// queue, typically): events were lost, so only a rebuild is safe.
	failed error
	// kick wakes the loop when the dirty set becomes non-empty or an error
	// arrives; later events only move the deadline, read at the timer.
	kick chan struct{}
}

func newCollector() *collector {
	return &collector{dirty: map[string]fsnotify.Op{}, kick: make(chan struct{}, 1)}
}

// run records the watcher's events and errors until the watcher is closed.
func (c *collector) run(w *fsnotify.Watcher) {
	events, errs := w.Events, w.Errors
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			c.record(ev, time.Now())
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			c.mu.Lock()
			c.failed = err
			c.mu.Unlock()
			c.wake()
		}
	}
}

func (c *collector) record(ev fsnotify.Event, now time.Time) {
	c.mu.Lock()
	wasEmpty := len(c.dirty) == 0
	if wasEmpty {
		c.first = now
	}
	c.last = now
	c.dirty[ev.Name] |= ev.Op
	c.mu.Unlock()
	if wasEmpty {
		c.wake()
	}
}

func (c *collector) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// due says when the pending paths are to be resolved: quiet after the
// last event, but no later than maxDelay after the first. ok is false when
// nothing is pending. A watcher error is due at once.
func (c *collector) due(quiet, maxDelay time.Duration) (at time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed != nil {
		return time.Time{}, true
	}
	if len(c.dirty) == 0 {
		return time.Time{}, false
	}
	at = c.last.Add(quiet)
	if limit := c.first.Add(maxDelay); limit.Before(at) {
		at = limit
	}
	return at, true
}

// take empties the collector: the paths to look at, and the watcher error
// (if any) since the last take.
func (c *collector) take() (map[string]fsnotify.Op, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dirty, failed := c.dirty, c.failed
	c.dirty, c.failed = map[string]fsnotify.Op{}, nil
	return dirty, failed
}
