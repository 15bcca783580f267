package fakes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
)

// FeedOpener decides how a fake session answers OpenFeed: the frames the
// feed starts with, or the error OpenFeed returns.
type FeedOpener func(req hub.FeedRequest) ([]hub.FeedFrame, error)

// feedScript is the Backend's record of the feeds its sessions opened and
// of how they answer. Guarded by Backend.mu.
type feedScript struct {
	opened   map[feedKey][]*Feed
	openers  map[feedKey]FeedOpener // by workspace and topic; Key unused
	activity map[string]hub.Observation
	shells   map[string]int64 // the shells revision each workspace's activity frames carry (SetShells); 0: none
	changed  chan struct{}    // closed and replaced whenever a feed opens
}

type feedKey struct {
	ws    string
	topic hub.Topic
	key   string
}

// Feed is an upstream a fake session opened. The test drives it: Send
// hands frames to the reader, End ends it. Safe for concurrent use.
type Feed struct {
	// Req is what the Hub asked for.
	Req hub.FeedRequest

	s *workspaceSession
	*frameQueue[hub.FeedFrame]
}

// SetFeedOpener makes OpenFeed of workspace ws for topic answer with open
// from now on; nil restores the default: activity starts with the
// workspace's activity (SetActivity; quiet by default), inventory with its
// opening tick (with the catalogs of the agents of SetAgents), document with an empty snapshot of a new epoch (DocSnapshot
// rooted at "/"+ws), and a conversation is unknown (NotFound).
func (b *Backend) SetFeedOpener(ws string, topic hub.Topic, open FeedOpener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := feedKey{ws: ws, topic: topic}
	if open == nil {
		delete(b.feeds.openers, k)
		return
	}
	if b.feeds.openers == nil {
		b.feeds.openers = map[feedKey]FeedOpener{}
	}
	b.feeds.openers[k] = open
}

// SetActivity makes the sessions of ws report working and awaiting: every
// open activity feed of ws gets the frame, and later ones start with it.
func (b *Backend) SetActivity(ws string, working, awaiting bool) {
	b.mu.Lock()
	if b.feeds.activity == nil {
		b.feeds.activity = map[string]hub.Observation{}
	}
	b.feeds.activity[ws] = hub.Observation{Running: true, Working: working, Awaiting: awaiting}
	b.sendActivity(ws)
}

// SetShells makes the sessions of ws report shells in their facts from
// now on and moves the shells revision their activity frames carry, as a
// child does when a shell opens, closes, is renamed or gains or loses its
// last client: every open activity feed of ws gets a frame with the new
// revision, and later ones start with it.
func (b *Backend) SetShells(ws string, shells []hub.Shell) {
	b.mu.Lock()
	f, ok := b.facts[ws]
	if !ok {
		f.WorkspaceAPIRevision = factsRevision
	}
	f.Shells = slices.Clone(shells)
	b.facts[ws] = f
	if b.feeds.shells == nil {
		b.feeds.shells = map[string]int64{}
	}
	b.feeds.shells[ws]++
	b.sendActivity(ws)
}

// sendActivity sends the activity of ws to every open activity feed of
// ws. b.mu is held, and released.
func (b *Backend) sendActivity(ws string) {
	frame := b.activityFrame(ws)
	open := slices.Clone(b.feeds.opened[feedKey{ws, hub.TopicActivity, ""}])
	b.mu.Unlock()
	for _, f := range open {
		f.Send(frame)
	}
}

// activityFrame is the activity frame of ws now: working and awaiting,
// and the shells revision once SetShells moved it. b.mu is held.
func (b *Backend) activityFrame(ws string) hub.FeedFrame {
	o := b.feeds.activity[ws]
	data := fmt.Appendf(nil, `{"working":%t,"awaiting":%t`, o.Working, o.Awaiting)
	if rev := b.feeds.shells[ws]; rev > 0 {
		data = fmt.Appendf(data, `,"shells":%d`, rev)
	}
	return hub.FeedFrame{Kind: hub.FrameData, Data: append(data, '}')}
}

// FeedOpens reports how many feeds of ws for topic and key were opened,
// refused ones not counted.
func (b *Backend) FeedOpens(ws string, topic hub.Topic, key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.feeds.opened[feedKey{ws, topic, key}])
}

// WaitFeed waits until the n-th feed (from 1) of ws for topic and key has
// opened and returns it, or returns ctx's error.
func (b *Backend) WaitFeed(ctx context.Context, ws string, topic hub.Topic, key string, n int) (*Feed, error) {
	for {
		b.mu.Lock()
		opened := b.feeds.opened[feedKey{ws, topic, key}]
		if b.feeds.changed == nil {
			b.feeds.changed = make(chan struct{})
		}
		changed := b.feeds.changed
		b.mu.Unlock()
		if len(opened) >= n {
			return opened[n-1], nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// OpenFeed answers as the workspace's opener says (see SetFeedOpener).
func (s *workspaceSession) OpenFeed(ctx context.Context, req hub.FeedRequest) (hub.Feed, error) {
	if err := ctx.Err(); err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-s.done:
		return nil, hub.Errorf(hub.Unavailable, "session has ended")
	default:
	}
	open := b.feeds.openers[feedKey{ws: s.id, topic: req.Topic}]
	if open == nil {
		open = b.defaultOpener(s)
	}
	frames, err := open(req)
	if err != nil {
		return nil, err
	}
	f := &Feed{Req: req, s: s, frameQueue: newFrameQueue(frames)}
	k := feedKey{s.id, req.Topic, req.Key}
	if b.feeds.opened == nil {
		b.feeds.opened = map[feedKey][]*Feed{}
	}
	b.feeds.opened[k] = append(b.feeds.opened[k], f)
	if b.feeds.changed != nil {
		close(b.feeds.changed)
	}
	b.feeds.changed = make(chan struct{})
	return f, nil
}

// defaultOpener is the opener of a workspace nobody scripted: a topic the
// topic table gives no feed is NotFound, as a real session answers, and
// every other opens as cannedFeeds says. b.mu is held.
func (b *Backend) defaultOpener(s *workspaceSession) FeedOpener {
	return func(req hub.FeedRequest) ([]hub.FeedFrame, error) {
		if t, ok := hub.LookupTopic(req.Topic); !ok || !t.Feed {
			return nil, hub.Errorf(hub.NotFound, "the session does not serve the %s feed", req.Topic)
		}
		canned := cannedFeeds[req.Topic]
		if canned == nil {
			// A topic added to the table without its canned feed here:
			// loud, so the tests that open it say so.
			return nil, hub.Errorf(hub.Internal, "fakes: no canned %s feed", req.Topic)
		}
		return canned(b, s, req)
	}
}

// cannedFeeds is how an unscripted session's feed of each topic opens, by
// topic: one for every topic the topic table gives a feed. Each runs with
// b.mu held.
var cannedFeeds = map[hub.Topic]func(b *Backend, s *workspaceSession, req hub.FeedRequest) ([]hub.FeedFrame, error){
	// Activity starts with the workspace's activity (SetActivity).
	hub.TopicActivity: func(b *Backend, s *workspaceSession, _ hub.FeedRequest) ([]hub.FeedFrame, error) {
		return []hub.FeedFrame{b.activityFrame(s.id)}, nil
	},
	// Inventory starts with its opening tick, with the catalog revision
	// of each agent the session knows (SetAgents).
	hub.TopicInventory: func(b *Backend, s *workspaceSession, _ hub.FeedRequest) ([]hub.FeedFrame, error) {
		return []hub.FeedFrame{{Kind: hub.FrameData, Data: b.inventoryTick(s)}}, nil
	},
	// Documents start with an empty snapshot of a new epoch.
	hub.TopicDocument: func(_ *Backend, s *workspaceSession, req hub.FeedRequest) ([]hub.FeedFrame, error) {
		c, err := hub.ParseDocumentKey(req.Key)
		if err != nil {
			return nil, hub.Errorf(hub.NotFound, "bad document key")
		}
		return []hub.FeedFrame{{Kind: hub.FrameData, Data: DocSnapshot("/"+s.id, uuid.NewString(), 0, c)}}, nil
	},
	// No conversation is known.
	hub.TopicConversation: func(*Backend, *workspaceSession, hub.FeedRequest) ([]hub.FeedFrame, error) {
		return nil, hub.Errorf(hub.NotFound, "unknown conversation")
	},
}

// endFeedsOf ends every feed of the ended session s.
func (b *Backend) endFeedsOf(s *workspaceSession) {
	b.mu.Lock()
	var open []*Feed
	for _, fs := range b.feeds.opened {
		for _, f := range fs {
			if f.s == s {
				open = append(open, f)
			}
		}
	}
	b.mu.Unlock()
	for _, f := range open {
		f.End(hub.Errorf(hub.Unavailable, "session has ended"))
	}
}

// frameQueue is what the reader of a fake feed gets: the frames the test
// sent, in order, then the end it gave. Safe for concurrent use.
type frameQueue[F any] struct {
	mu     sync.Mutex
	queue  []F
	err    error // the end Next reports once the queue is drained
	wake   chan struct{}
	closed chan struct{}
	once   sync.Once
}

// newFrameQueue returns a queue holding first.
func newFrameQueue[F any](first []F) *frameQueue[F] {
	return &frameQueue[F]{queue: slices.Clone(first), wake: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Send queues frames for the reader, as they are; after End or Close it
// does nothing.
func (f *frameQueue[F]) Send(frames ...F) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return
	}
	f.queue = append(f.queue, frames...)
	f.signal()
}

// End ends the feed: Next returns the frames already sent, then err (nil
// means io.EOF, an orderly end). Only the first End counts.
func (f *frameQueue[F]) End(err error) {
	if err == nil {
		err = io.EOF
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
	f.signal()
}

// Closed is closed once the Hub has closed the feed.
func (f *frameQueue[F]) Closed() <-chan struct{} { return f.closed }

// IsClosed reports whether the Hub has closed the feed.
func (f *frameQueue[F]) IsClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

func (f *frameQueue[F]) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Next returns the next frame sent, then the end End gave; after Close
// it fails, and when ctx ends first it returns ctx's error.
func (f *frameQueue[F]) Next(ctx context.Context) (F, error) {
	var none F
	for {
		f.mu.Lock()
		if f.IsClosed() {
			f.mu.Unlock()
			return none, errFeedClosed
		}
		if len(f.queue) > 0 {
			fr := f.queue[0]
			f.queue = f.queue[1:]
			f.mu.Unlock()
			return fr, nil
		}
		if f.err != nil {
			err := f.err
			f.mu.Unlock()
			return none, err
		}
		f.mu.Unlock()
		select {
		case <-f.wake:
		case <-f.closed:
		case <-ctx.Done():
			return none, ctx.Err()
		}
	}
}

var errFeedClosed = errors.New("feed closed")

// Close marks the feed closed; Next then fails. It may be called more
// than once.
func (f *frameQueue[F]) Close() { f.once.Do(func() { close(f.closed) }) }

// Doc is one document of a fake document state: a path relative to the
// root, and the revision of its last save.
type Doc struct {
	Path     string
	Revision int64
}

// DocSnapshot encodes a DocumentSnapshot of the root folder with docs, in
// context c, valid against the contract.
func DocSnapshot(root, epoch string, revision int64, c hub.DocumentContext, docs ...Doc) []byte {
	metas := make([]map[string]any, 0, len(docs))
	for _, d := range docs {
		metas = append(metas, docMeta(root, d))
	}
	return mustJSON(map[string]any{
		"kind": "snapshot", "epoch": epoch, "revision": revision,
		"discovery":            map[string]any{"status": "ready", "discovered": len(docs)},
		"repositoryState":      map[string]any{"generation": 0, "status": "pending"},
		"workspaceApiRevision": 24,
		"roots":                []any{map[string]any{"id": root, "label": root, "path": root, "docs": metas, "hiddenCount": 0}},
		"repositories":         []any{},
		"compareTarget":        c.CompareTarget, "initialFollow": true,
		"defaultDocumentId": nil, "changedId": nil, "generatedAt": revision + 1,
		"build": map[string]any{"version": "test", "branch": "", "commitSha": "", "commitShort": "",
			"release": false, "identifier": "test", "bundledWebRevision": 0},
		"scope": scopeOf(c), "unscopedFingerprint": fmt.Sprintf("%s:%d", epoch, revision),
	})
}

// DocPatch encodes a DocumentPatch on previous that upserts docs and
// removes the documents at the relative paths removed.
func DocPatch(root, epoch string, previous, revision int64, c hub.DocumentContext, upserts []Doc, removed ...string) []byte {
	metas := make([]map[string]any, 0, len(upserts))
	var changed any
	for _, d := range upserts {
		metas = append(metas, docMeta(root, d))
		changed = root + "/" + d.Path
	}
	rem := make([]map[string]any, 0, len(removed))
	for _, p := range removed {
		rem = append(rem, map[string]any{"rootId": root, "id": root + "/" + p})
	}
	return mustJSON(map[string]any{
		"kind": "patch", "epoch": epoch, "previousRevision": previous, "revision": revision,
		"generatedAt": revision + 1, "scope": scopeOf(c), "compareTarget": c.CompareTarget,
		"unscopedFingerprint": fmt.Sprintf("%s:%d", epoch, revision),
		"upserts":             metas, "removals": rem, "changedId": changed,
	})
}

func docMeta(root string, d Doc) map[string]any {
	return map[string]any{"id": root + "/" + d.Path, "name": d.Path, "relativePath": d.Path,
		"mtimeMs": 1, "rootId": root, "kind": "markdown", "revision": d.Revision}
}

func scopeOf(c hub.DocumentContext) map[string]any {
	if c.DocumentID != "" {
		return map[string]any{"kind": "file", "documentId": c.DocumentID}
	}
	return map[string]any{"kind": "folder"}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
