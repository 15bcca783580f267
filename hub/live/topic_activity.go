package live

import (
	"fmt"
	"strconv"

	"github.com/wharfhub/wharf/hub"
)

// The activity topic: whether each workspace runs, works, awaits the user
// or has finished since that user last looked. It is Hub-wide and turned
// on by `activity=1` when a stream opens, not named in `subs`. Each user's
// streams share one feed, which sends a summary per registered workspace
// at open and then only what changed for that user. What is observed, and
// the marks behind `finished`, live in activitywatch.go.

type activityTopic struct {
	b     *Broker
	feeds map[string]*activityFeed // by user; guarded by Broker.mu
}

// activityFeed is one user's activity feed: the subscribers that asked
// for it and the last value each workspace was sent.
type activityFeed struct {
	epoch string
	seq   uint64
	last  map[string]hub.WorkspaceActivity
	subs  map[*attachment]struct{}
}

func newActivityTopic(b *Broker) *activityTopic {
	return &activityTopic{b: b, feeds: map[string]*activityFeed{}}
}

func (*activityTopic) name() hub.Topic { return hub.TopicActivity }

// subscribable is false: `activity=1` turns the topic on.
func (*activityTopic) checkKey(hub.SubKey) error        { return nil }
func (*activityTopic) identity(k hub.SubKey) hub.SubKey { return k }

func (f *activityFeed) next() string {
	f.seq++
	return f.epoch + "." + strconv.FormatUint(f.seq, 10)
}

func encodeActivity(v hub.WorkspaceActivity) []byte {
	return fmt.Appendf(nil, `{"running":%t,"working":%t,"awaiting":%t,"finished":%t}`,
		v.Running, v.Working, v.Awaiting, v.Finished)
}

// attachLocked joins a's stream to its user's feed: one summary per
// registered workspace, then every change. The summaries carry data only:
// the contract has no `ready` for this topic.
func (t *activityTopic) attachLocked(a *attachment) {
	user := a.s.user
	f := t.feeds[user]
	if f == nil {
		f = &activityFeed{epoch: newEpoch(), last: map[string]hub.WorkspaceActivity{}, subs: map[*attachment]struct{}{}}
		t.feeds[user] = f
	}
	f.subs[a] = struct{}{}
	reg := t.b.host.Workspaces()
	envs := make([]Envelope, 0, len(reg))
	for _, w := range reg {
		v := t.b.marks.of(user, w.ID)
		f.last[w.ID] = v
		envs = append(envs, Envelope{WS: w.ID, Topic: hub.TopicActivity, Cursor: f.next(), Kind: hub.EventData, Data: encodeActivity(v)})
	}
	t.b.deliverLocked(a, envs...)
}

func (t *activityTopic) releaseLocked(a *attachment) {
	f := t.feeds[a.s.user]
	if f == nil {
		return
	}
	delete(f.subs, a)
	if len(f.subs) == 0 {
		delete(t.feeds, a.s.user)
	}
}

// changedLocked sends every feed whose value of ws changed the new value.
// b.mu is held.
func (t *activityTopic) changedLocked(ws string) {
	for user, f := range t.feeds {
		v := t.b.marks.of(user, ws)
		if old, ok := f.last[ws]; ok && old == v {
			continue
		}
		f.last[ws] = v
		e := Envelope{WS: ws, Topic: hub.TopicActivity, Cursor: f.next(), Kind: hub.EventData, Data: encodeActivity(v)}
		for a := range f.subs {
			t.b.deliverLocked(a, e)
		}
	}
	t.b.settleLocked()
}

// forgetLocked drops ws from every feed: it left the registry, and a later
// workspace must inherit nothing of it. b.mu is held.
func (t *activityTopic) forgetLocked(ws string) {
	for _, f := range t.feeds {
		delete(f.last, ws)
	}
}
