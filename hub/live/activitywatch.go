package live

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// This file is what feeds the activity topic (topic_activity.go): the
// Hub watches the activity of every running workspace session itself,
// whether or not anyone looks (a finish seen by nobody must still show
// when someone comes), keeps the marks behind `finished` and persists
// them.

// observe records what the Hub learned of ws's session rs and tells the
// feeds and the Observed hook what changed, then persists a finish mark
// that was set or cleared. marksMu orders the writes and the hook's calls
// as the observations were made.
func (b *Broker) observe(ctx context.Context, ws string, rs hub.WorkspaceSession, o hub.Observation) {
	b.marksMu.Lock()
	defer b.marksMu.Unlock()
	b.mu.Lock()
	before, had := b.marks.finishedAt[ws]
	b.marks.observe(ws, o)
	after, has := b.marks.finishedAt[ws]
	b.activity().changedLocked(ws)
	b.mu.Unlock()
	b.observed(ws, rs, o)
	switch {
	case has && (!had || after != before):
		b.persistMarks(ctx, func(tx MarkWrites) error {
			return tx.PutActivityMark(hub.ActivityMark{WorkspaceID: ws, Stamp: after})
		})
	case had && !has:
		b.persistMarks(ctx, func(tx MarkWrites) error { return tx.DeleteActivityMark(ws, "") })
	}
}

// Acknowledge records that user viewed ws's activity, reporting whether
// there was an unseen finish to acknowledge.
func (b *Broker) Acknowledge(ctx context.Context, user, ws string) bool {
	b.marksMu.Lock()
	defer b.marksMu.Unlock()
	b.mu.Lock()
	changed := b.marks.acknowledge(user, ws)
	stamp := b.marks.viewedAt[user][ws]
	if changed {
		b.activity().changedLocked(ws)
	}
	b.mu.Unlock()
	if changed {
		b.persistMarks(ctx, func(tx MarkWrites) error {
			return tx.PutActivityMark(hub.ActivityMark{WorkspaceID: ws, User: user, Stamp: stamp})
		})
	}
	return changed
}

// clearActivity forgets every mark of ws: its session stopped, or it left
// the registry (a later workspace must inherit nothing of it).
func (b *Broker) clearActivity(ctx context.Context, ws string, forgotten bool) {
	b.marksMu.Lock()
	defer b.marksMu.Unlock()
	b.mu.Lock()
	if b.closed {
		// A Hub shutting down stops every session, which is no stop of
		// the user's: the marks outlive the restart.
		b.mu.Unlock()
		return
	}
	b.marks.stopped(ws)
	if forgotten {
		b.activity().forgetLocked(ws)
	} else {
		b.activity().changedLocked(ws)
	}
	b.mu.Unlock()
	if !forgotten { // a forgotten workspace's marks went with its record
		b.persistMarks(ctx, func(tx MarkWrites) error { return tx.DeleteActivityMarks(ws) })
	}
}

// persistMarks writes a change of marks through the Hub's commit path. A
// failure is logged and not retried: the marks in memory stay right for
// this Hub's life, and only a restart could show an older finish.
func (b *Broker) persistMarks(ctx context.Context, fn func(MarkWrites) error) {
	// Not cancelled with the request or the watch that made the change:
	// the marks in memory already hold it.
	err := b.host.CommitMarks(context.WithoutCancel(ctx), fn)
	if err != nil && hub.KindOf(err) != hub.NotFound {
		b.log.Warn("activity marks could not be persisted", "err", err)
	}
}

// watchActivity follows the activity of ws's running session rs until ctx
// ends (the session stopped). A session that stops answering reads as not
// running, with its marks kept, and is asked again with backoff; one
// without an activity feed reads as running with nothing known.
func (b *Broker) watchActivity(ctx context.Context, ws string, rs hub.WorkspaceSession) {
	defer b.wg.Done()
	delay := upstreamRetryMin
	failing := false    // an episode of failures is logged once, at its start
	shells := int64(-1) // the last shells revision seen; -1: none yet
	for {
		octx, cancel := context.WithTimeout(ctx, upstreamOpenTimeout)
		feed, err := rs.OpenFeed(octx, hub.FeedRequest{Topic: hub.TopicActivity})
		cancel()
		if err == nil {
			delay, failing = upstreamRetryMin, false
			err = b.readActivity(ctx, ws, rs, feed, &shells)
			feed.Close()
		} else if hub.KindOf(err) == hub.NotFound && ctx.Err() == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !failing {
			failing = true
			// Never the workspace id: it is the user's.
			b.log.LogAttrs(ctx, slog.LevelWarn, "workspace activity feed failed; retrying",
				slog.String("kind", hub.KindOf(err).String()))
		}
		b.observe(ctx, ws, rs, hub.Observation{})
		if !hub.Sleep(ctx, b.clock, delay) {
			return
		}
		delay = min(2*delay, upstreamRetryMax)
	}
}

// readActivity relays one activity feed until it ends. Only the two
// booleans are kept, and the shells revision compared with *shells (the
// last one seen) to tell ShellsMoved; anything else the session says is
// dropped.
func (b *Broker) readActivity(ctx context.Context, ws string, rs hub.WorkspaceSession, feed hub.Feed, shells *int64) error {
	for {
		fr, err := feed.Next(ctx)
		if err != nil {
			return err
		}
		var a struct {
			Working  *bool  `json:"working"`
			Awaiting *bool  `json:"awaiting"`
			Shells   *int64 `json:"shells"`
		}
		if fr.Kind != hub.FrameData || json.Unmarshal(fr.Data, &a) != nil || a.Working == nil || a.Awaiting == nil ||
			(a.Shells != nil && *a.Shells < 0) {
			return hub.Errorf(hub.Unavailable, "the session sent a malformed activity frame")
		}
		b.observe(ctx, ws, rs, hub.Observation{Running: true, Working: *a.Working, Awaiting: *a.Awaiting})
		if a.Shells != nil && *a.Shells != *shells {
			*shells = *a.Shells
			b.shellsMoved(ws, rs)
		}
	}
}

// RestoreMarks restores the activity marks the store kept; the Hub calls
// it once, before any session starts. The counter resumes above every
// stamp read back.
func (b *Broker) RestoreMarks(marks []hub.ActivityMark) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.marks
	for _, mk := range marks {
		m.stamp = max(m.stamp, mk.Stamp)
		if mk.User == "" {
			m.finishedAt[mk.WorkspaceID] = mk.Stamp
			continue
		}
		if m.viewedAt[mk.User] == nil {
			m.viewedAt[mk.User] = map[string]uint64{}
		}
		m.viewedAt[mk.User][mk.WorkspaceID] = mk.Stamp
	}
}
