package hub

import "context"

// This file connects the live broker to the sessions' lifecycle: a start
// reopens what waits for it and starts the Hub's watch of the session's
// activity; an end fails what follows the session and clears its
// activity marks.

// workspaceSessionStarted reopens at once the failed upstreams of ws that still
// have subscribers.
// It also starts the Hub's own watch of the session's activity.
func (b *liveBroker) workspaceSessionStarted(ws string) {
	ls := b.h.workspaceSession(ws)
	if ls == nil {
		return
	}
	// Running, nothing heard yet: said before the watch starts, so a
	// stream opened right after the start sees the session as running.
	b.observe(ws, Observation{Running: true})
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

// workspaceSessionEnded fails the upstreams of ws at once, rather than waiting for
// their feeds to notice, ends the watch of its activity and clears its
// activity marks.
func (b *liveBroker) workspaceSessionEnded(ws string) {
	b.mu.Lock()
	for k, u := range b.ups {
		if k.ws == ws && (u.state == upLive || u.state == upOpening) {
			b.failLocked(u, u.gen, Errorf(Unavailable, "the workspace session ended"))
		}
	}
	b.settleLocked()
	if stop := b.watches[ws]; stop != nil {
		stop()
		delete(b.watches, ws)
	}
	b.mu.Unlock()
	b.clearActivity(ws, false)
}
