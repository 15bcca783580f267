package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// This file connects the live broker to the sessions' lifecycle: a start
// reopens what waits for it and starts the Hub's watch of the session's
// activity; an end fails what follows the session and clears its
// activity marks.

// workspaceSessionStarted reopens at once the failed upstreams of ws that
// still have subscribers, and starts the Hub's own watch of the session's
// activity. rw is the session that started: when it is no longer ws's
// (published after it ended), there is nothing to do.
func (b *liveBroker) workspaceSessionStarted(ctx context.Context, ws string, rw *runningWorkspace) {
	ls := b.h.workspaceSession(ws)
	if ls == nil || ls != rw {
		return
	}
	// Running, nothing heard yet: said before the watch starts, so a
	// stream opened right after the start sees the session as running.
	b.observe(ctx, ws, hub.Observation{Running: true})
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for k, u := range b.ups {
		if k.ws == ws && u.state == upFailed && len(u.subs) > 0 {
			b.openLocked(u)
		}
	}
	b.settleLocked()
	if stop := b.watches[ws]; stop != nil {
		stop()
	}
	ctx, cancel := context.WithCancel(b.h.bg)
	if b.watches == nil {
		b.watches = map[string]context.CancelFunc{}
	}
	b.watches[ws] = cancel
	b.wg.Add(1)
	go b.watchActivity(ctx, ws, ls.rs)
}

// workspaceSessionEnded fails the upstreams of ws at once, rather than
// waiting for their feeds to notice, ends the watch of its activity and
// clears its activity marks. rw is the session that ended: when ws already
// runs a newer one (this was published after that one started), the newer
// session's upstreams, watch and marks are left alone.
func (b *liveBroker) workspaceSessionEnded(ctx context.Context, ws string, rw *runningWorkspace) {
	if cur := b.h.workspaceSession(ws); cur != nil && cur != rw {
		return
	}
	b.mu.Lock()
	for k, u := range b.ups {
		if k.ws == ws && (u.state == upLive || u.state == upOpening) {
			b.failLocked(u, u.gen, hub.Errorf(hub.Unavailable, "the workspace session ended"))
		}
	}
	b.settleLocked()
	if stop := b.watches[ws]; stop != nil {
		stop()
		delete(b.watches, ws)
	}
	b.mu.Unlock()
	b.clearActivity(ctx, ws, false)
}
