package live

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// This file is what the service tells the broker of its workspaces, from
// the consequences of its commits (hub/service's changes): a workspace
// registered shows in the activity feeds; a session's start reopens what
// waits for it and starts the Hub's watch of the session's activity; its
// end fails what follows the session and clears its activity marks; a
// workspace that leaves the registry leaves no mark behind.

// WorkspaceRegistered tells the activity feeds of a new workspace: not
// running.
func (b *Broker) WorkspaceRegistered(ws string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.activity().changedLocked(ws)
}

// WorkspaceSessionStarted reopens at once the failed upstreams of ws that
// still have subscribers (their backoff starting over), and starts the Hub's own watch of the activity
// of rs, the session that started. The caller has checked that rs is
// still ws's running session (a start published after the session ended
// is not announced).
func (b *Broker) WorkspaceSessionStarted(ctx context.Context, ws string, rs hub.WorkspaceSession) {
	// Running, nothing heard yet: said before the watch starts, so a
	// stream opened right after the start sees the session as running.
	b.observe(ctx, ws, rs, hub.Observation{Running: true})
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for k, u := range b.ups {
		if k.ws == ws && u.state == upFailed && len(u.subs) > 0 {
			// A new session is a new chance: its retries start from
			// the shortest delay, whatever the last session's grew to.
			u.delay = upstreamRetryMin
			b.openLocked(u)
		}
	}
	b.settleLocked()
	if stop := b.watches[ws]; stop != nil {
		stop()
	}
	ctx, cancel := context.WithCancel(b.bg)
	if b.watches == nil {
		b.watches = map[string]context.CancelFunc{}
	}
	b.watches[ws] = cancel
	b.wg.Add(1)
	go b.watchActivity(ctx, ws, rs)
}

// WorkspaceSessionEnded fails the upstreams of ws at once, rather than
// waiting for their feeds to notice, ends the watch of its activity and
// clears its activity marks. The caller has checked that ws runs no newer
// session (an end published after the next start is not announced: the
// newer session's upstreams, watch and marks are left alone).
func (b *Broker) WorkspaceSessionEnded(ctx context.Context, ws string) {
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

// WorkspaceForgotten forgets every activity mark of ws, which left the
// registry: a later workspace must inherit nothing of it. Its stored
// marks went with its record.
func (b *Broker) WorkspaceForgotten(ctx context.Context, ws string) {
	b.clearActivity(ctx, ws, true)
}
