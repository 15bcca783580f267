package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// This file is the activity topic: the Hub watches the activity of every
// running session itself, whether or not anyone looks (a finish seen by
// nobody must still show when someone comes), and each user's streams
// with activity=1 share one feed that says what changed for that user.

// activityFeed is one user's activity feed: the streams that asked for
// it and the last value each workspace was sent. Guarded by
// liveBroker.mu.
type activityFeed struct {
	epoch   string
	seq     uint64
	last    map[string]WorkspaceActivity
	streams map[*LiveStream]struct{}
}

func (f *activityFeed) next() string {
	f.seq++
	return f.epoch + "." + strconv.FormatUint(f.seq, 10)
}

func encodeActivity(v WorkspaceActivity) []byte {
	return fmt.Appendf(nil, `{"running":%t,"working":%t,"awaiting":%t,"finished":%t}`,
		v.Running, v.Working, v.Awaiting, v.Finished)
}

// followActivityLocked turns s's activity topic on: s gets one summary per
// workspace in reg, then every change. b.mu is held.
func (b *liveBroker) followActivityLocked(s *LiveStream, reg []Workspace) {
	f := b.activity[s.user]
	if f == nil {
		f = &activityFeed{epoch: newEpoch(), last: map[string]WorkspaceActivity{}, streams: map[*LiveStream]struct{}{}}
		if b.activity == nil {
			b.activity = map[string]*activityFeed{}
		}
		b.activity[s.user] = f
	}
	f.streams[s] = struct{}{}
	s.activity = true
	envs := make([]Envelope, 0, len(reg))
	for _, w := range reg {
		v := b.marks.of(s.user, w.ID)
		f.last[w.ID] = v
		envs = append(envs, Envelope{WS: w.ID, Topic: TopicActivity, Cursor: f.next(), Kind: EventData, Data: encodeActivity(v)})
	}
	b.sendLocked(s, nil, envs...)
}

// unfollowActivityLocked takes the ended stream s out of its user's feed.
// b.mu is held.
func (b *liveBroker) unfollowActivityLocked(s *LiveStream) {
	f := b.activity[s.user]
	if f == nil || !s.activity {
		return
	}
	delete(f.streams, s)
	if len(f.streams) == 0 {
		delete(b.activity, s.user)
	}
}

// activityChangedLocked sends every feed whose value of ws changed the new
// value. b.mu is held.
func (b *liveBroker) activityChangedLocked(ws string) {
	for user, f := range b.activity {
		v := b.marks.of(user, ws)
		if old, ok := f.last[ws]; ok && old == v {
			continue
		}
		f.last[ws] = v
		e := Envelope{WS: ws, Topic: TopicActivity, Cursor: f.next(), Kind: EventData, Data: encodeActivity(v)}
		for s := range f.streams {
			b.sendLocked(s, nil, e)
		}
	}
	b.settleLocked()
}

// observe records what the Hub learned of ws's session and tells the
// feeds what changed, then persists a finish mark that was set or
// cleared. marksMu orders the writes as the observations were made.
func (b *liveBroker) observe(ws string, o Observation) {
	b.marksMu.Lock()
	defer b.marksMu.Unlock()
	b.mu.Lock()
	before, had := b.marks.finishedAt[ws]
	b.marks.observe(ws, o)
	after, has := b.marks.finishedAt[ws]
	b.activityChangedLocked(ws)
	b.mu.Unlock()
	switch {
	case has && (!had || after != before):
		b.persistMarks(func(tx Tx) error {
			return tx.PutActivityMark(ActivityMark{WorkspaceID: ws, Stamp: after})
		})
	case had && !has:
		b.persistMarks(func(tx Tx) error { return tx.DeleteActivityMark(ws, "") })
	}
}

// acknowledge records that user viewed ws's activity, reporting whether
// there was an unseen finish to acknowledge.
func (b *liveBroker) acknowledge(user, ws string) bool {
	b.marksMu.Lock()
	defer b.marksMu.Unlock()
	b.mu.Lock()
	changed := b.marks.acknowledge(user, ws)
	stamp := b.marks.viewedAt[user][ws]
	if changed {
		b.activityChangedLocked(ws)
	}
	b.mu.Unlock()
	if changed {
		b.persistMarks(func(tx Tx) error {
			return tx.PutActivityMark(ActivityMark{WorkspaceID: ws, User: user, Stamp: stamp})
		})
	}
	return changed
}

// clearActivity forgets every mark of ws: its session stopped, or it left
// the registry (a later workspace must inherit nothing of it).
func (b *liveBroker) clearActivity(ws string, forgotten bool) {
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
		for _, f := range b.activity {
			delete(f.last, ws)
		}
	} else {
		b.activityChangedLocked(ws)
	}
	b.mu.Unlock()
	if !forgotten { // a forgotten workspace's marks went with its record
		b.persistMarks(func(tx Tx) error { return tx.DeleteActivityMarks(ws) })
	}
}

// persistMarks writes a change of marks. A failure is logged and not
// retried: the marks in memory stay right for this Hub's life, and only a
// restart could show an older finish.
func (b *liveBroker) persistMarks(fn func(Tx) error) {
	err := b.h.store.Update(context.Background(), fn)
	if err != nil && KindOf(err) != NotFound {
		b.h.log.Warn("activity marks could not be persisted", "err", err)
	}
}

// watchActivity follows the activity of ws's running session rs until ctx
// ends (the session stopped). A session that stops answering reads as not
// running, with its marks kept, and is asked again with backoff; one
// without an activity feed reads as running with nothing known.
func (b *liveBroker) watchActivity(ctx context.Context, ws string, rs WorkspaceSession) {
	defer b.wg.Done()
	delay := upstreamRetryMin
	for {
		octx, cancel := context.WithTimeout(ctx, upstreamOpenTimeout)
		feed, err := rs.OpenFeed(octx, FeedRequest{Topic: TopicActivity})
		cancel()
		if err == nil {
			delay = upstreamRetryMin
			err = b.readActivity(ctx, ws, feed)
			feed.Close()
		} else if KindOf(err) == NotFound && ctx.Err() == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		b.observe(ws, Observation{})
		if !b.h.sleep(ctx, delay) {
			return
		}
		delay = min(2*delay, upstreamRetryMax)
	}
}

// readActivity relays one activity feed until it ends. Only the two
// booleans are kept; anything else the session says is dropped.
func (b *liveBroker) readActivity(ctx context.Context, ws string, feed Feed) error {
	for {
		fr, err := feed.Next(ctx)
		if err != nil {
			return err
		}
		var a struct {
			Working  *bool `json:"working"`
			Awaiting *bool `json:"awaiting"`
		}
		if fr.Kind != FrameData || json.Unmarshal(fr.Data, &a) != nil || a.Working == nil || a.Awaiting == nil {
			return Errorf(Unavailable, "the session sent a malformed activity frame")
		}
		b.observe(ws, Observation{Running: true, Working: *a.Working, Awaiting: *a.Awaiting})
	}
}

// sleep waits d on the Hub's clock, reporting false when ctx ended first.
func (h *Hub) sleep(ctx context.Context, d time.Duration) bool {
	fired := make(chan struct{})
	t := h.clock.AfterFunc(d, func() { close(fired) })
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// registered tells the activity feeds of a new workspace: not running.
func (b *liveBroker) registered(ws string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.activityChangedLocked(ws)
}

// loadMarks restores the persisted marks; Recover calls it before any
// session starts. The counter resumes above every stamp read back.
func (h *Hub) loadMarks(ctx context.Context) error {
	var marks []ActivityMark
	if err := h.store.View(ctx, func(tx Tx) error {
		var err error
		marks, err = tx.ActivityMarks()
		return err
	}); err != nil {
		return err
	}
	b := &h.live
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
	return nil
}
