package service_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/service"
)

// login opens a real device session for ann, so keepalive checks and
// logout find it in the store.
func (e *env) login() (hub.DeviceSession, string) {
	e.t.Helper()
	res, err := e.Login(e.ctx, hub.LoginRequest{Name: "ann", Password: "correct horse battery", ClientAddr: "127.0.0.1"})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Session, res.SessionID
}

// liveEnv is an env with one registered repository, app, and a real
// device session of ann's.
type liveEnv struct {
	*env
	app  string
	sess hub.DeviceSession
	id   string // the session's secret id
}

func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	return newLiveEnvWith(t, service.Config{})
}

// newLiveEnvWith is newLiveEnv whose Hubs take cfg.
func newLiveEnvWith(t *testing.T, cfg service.Config) *liveEnv {
	t.Helper()
	e := newEnvWith(t, cfg)
	app := e.register(e.repo("/home/ann/app"))
	sess, id := e.login()
	return &liveEnv{env: e, app: app, sess: sess, id: id}
}

// open opens a stream on app for ann's session, failing the test on error.
func (e *liveEnv) open(subs ...hub.Subscription) *live.Stream {
	e.t.Helper()
	s, err := e.OpenLive(e.ctx, e.sess, e.app, false, subs)
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	return s
}

// next is one turn of a live stream's writer.
type next struct {
	envs      []live.Envelope
	keepalive bool
	err       error
}

// reader runs s's writer in the background and hands over each turn.
func reader(ctx context.Context, s *live.Stream) <-chan next {
	out := make(chan next)
	go func() {
		defer close(out)
		for {
			var turn next
			turn.err = s.Next(ctx, func(envs []live.Envelope, keepalive bool) error {
				turn.envs, turn.keepalive = append([]live.Envelope(nil), envs...), keepalive
				return nil
			})
			select {
			case out <- turn:
			case <-ctx.Done():
				return
			}
			if turn.err != nil {
				return
			}
		}
	}()
	return out
}

// take collects envelopes from turns until n have arrived, checking each
// against the contract.
func take(t *testing.T, turns <-chan next, n int) []live.Envelope {
	t.Helper()
	var got []live.Envelope
	deadline := time.After(5 * time.Second)
	for len(got) < n {
		select {
		case turn, ok := <-turns:
			if !ok || turn.err != nil {
				t.Fatalf("stream ended after %d envelopes: %v", len(got), turn.err)
			}
			for _, e := range turn.envs {
				if msg := checkEnvelope(e); msg != "" {
					t.Errorf("envelope %+v breaks the contract: %s", e, msg)
				}
			}
			got = append(got, turn.envs...)
		case <-deadline:
			t.Fatalf("only %d of %d envelopes arrived", len(got), n)
		}
	}
	return got
}

// payloadSchema names the schema of each topic's data (and of a
// conversation resync's).
var payloadSchema = map[hub.Topic]string{
	hub.TopicDocument:     "DocumentUpdate",
	hub.TopicInventory:    "ConversationInventoryEvent",
	hub.TopicConversation: "ChatEvent",
	hub.TopicActivity:     "WorkspaceActivity",
	hub.TopicWorktrees:    "WorktreeInventoryEvent",
}

// checkEnvelope says how e breaks the contract's LiveEnvelope rules, or "".
func checkEnvelope(e live.Envelope) string {
	schema, ok := payloadSchema[e.Topic]
	switch {
	case !ok:
		return "unknown topic"
	case e.WS == "":
		return "no ws"
	case e.Keyed != (e.Topic == hub.TopicConversation || e.Topic == hub.TopicDocument && e.Keyed):
		return "a key where the topic takes none, or none where it needs one"
	case e.Topic == hub.TopicWorktrees && e.Cursor != "":
		return "a worktrees cursor"
	}
	switch e.Kind {
	case hub.EventData:
		if err := service.CheckSchema(schema, e.Data); err != nil {
			return err.Error()
		}
	case hub.EventResync:
		if e.Topic != hub.TopicConversation {
			if e.Data != nil {
				return "resync data outside the conversation topic"
			}
			return ""
		}
		if err := service.CheckSchema("ChatResyncEvent", e.Data); err != nil {
			return err.Error()
		}
	case hub.EventReady, hub.EventUnavailable:
		if e.Data != nil {
			return "a signal with data"
		}
	default:
		return "unknown kind"
	}
	return ""
}

// idle reports that no turn is waiting once every goroutine of the bubble
// is blocked.
func idle(turns <-chan next) bool {
	synctest.Wait()
	select {
	case <-turns:
		return false
	default:
		return true
	}
}

// silent reports that, once every goroutine of the bubble is blocked, no
// envelope is waiting: keepalives (which a test that moves the clock far
// makes due) are taken and ignored.
func silent(turns <-chan next) bool {
	for {
		synctest.Wait()
		select {
		case turn := <-turns:
			if len(turn.envs) > 0 || turn.err != nil {
				return false
			}
		default:
			return true
		}
	}
}

func worktrees() hub.Subscription {
	return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicWorktrees}}
}

func TestOpeningALiveStreamChecksEverythingFirst(t *testing.T) {
	e := newLiveEnv(t)
	long := string(make([]byte, 4097))
	doc := func(key string) hub.Subscription {
		return hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicDocument, Key: key, Keyed: true}}
	}
	tests := []struct {
		name string
		ws   string
		subs []hub.Subscription
		kind hub.Kind
		msg  string
	}{
		{"empty workspace id", "", nil, hub.Invalid, "invalid workspace id"},
		{"workspace id over 256 bytes", string(make([]byte, 257)), nil, hub.Invalid, "invalid workspace id"},
		{"unknown workspace", "nope", nil, hub.NotFound, "unknown workspace"},
		{"activity subscribed", "app", []hub.Subscription{{SubKey: hub.SubKey{Topic: hub.TopicActivity}}}, hub.Invalid,
			"subscription topic must be document, inventory, conversation, or worktrees"},
		{"conversation without key", "app", []hub.Subscription{{SubKey: hub.SubKey{Topic: hub.TopicConversation}}}, hub.Invalid,
			"conversation subscription needs a key"},
		{"inventory with key", "app", []hub.Subscription{{SubKey: hub.SubKey{Topic: hub.TopicInventory, Key: "x", Keyed: true}}}, hub.Invalid,
			"inventory subscription takes no key"},
		{"key over 4096 bytes", "app", []hub.Subscription{{SubKey: hub.SubKey{Topic: hub.TopicConversation, Key: long, Keyed: true}}}, hub.Invalid,
			"subscription key is too large"},
		{"cursor over 1024 bytes", "app", []hub.Subscription{{SubKey: hub.SubKey{Topic: hub.TopicInventory}, Cursor: long[:1025]}}, hub.Invalid,
			"subscription cursor is too large"},
		{"document key with an unknown parameter", "app", []hub.Subscription{doc("colour=blue")}, hub.Invalid,
			`invalid document key: unknown parameter "colour"`},
		{"file scope without a document", "app", []hub.Subscription{doc("scope=file")}, hub.Invalid,
			"invalid document key: scope=file requires documentId"},
		{"relative document", "app", []hub.Subscription{doc("scope=file&documentId=a.md")}, hub.Invalid,
			"invalid document key: documentId must be an absolute path"},
		{"17 subscriptions", "app", make([]hub.Subscription, 17), hub.Invalid, "too many subscriptions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.OpenLive(e.ctx, e.sess, tt.ws, false, tt.subs)
			is.Equal(hub.KindOf(err), tt.kind)   // the contract's status
			is.Equal(hub.MessageOf(err), tt.msg) // and message
		})
	}
}

func TestWorktreesTopic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		app := e.app
		turns := reader(t.Context(), e.open(worktrees()))

		got := take(t, turns, 2)
		is.Equal(got[0].Kind, hub.EventData)                           // every attach gets an invalidation
		is.Equal(string(got[0].Data), `{"type":"worktree.inventory"}`) // content-free
		is.Equal(got[0].Cursor, "")                                    // with an empty cursor
		is.True(!got[0].Keyed)                                         // and no key
		is.Equal(got[1].Kind, hub.EventReady)                          // then ready

		e.register(e.repo("/home/ann/other"))
		is.True(idle(turns)) // another repository's registration is not announced

		e.dir("/home/ann/app/sub")
		nested := e.register("/home/ann/app/sub")
		got = take(t, turns, 1)
		is.Equal(got[0].Kind, hub.EventData) // a registration in the same repository is
		is.Equal(got[0].WS, app)             // on the stream's workspace

		_, err := e.ForgetWorkspace(e.ctx, nested)
		is.NoErr(err)                                      // forget
		is.Equal(take(t, turns, 1)[0].Kind, hub.EventData) // announced too

		e.register("/home/ann/app/sub")
		is.Equal(take(t, turns, 1)[0].Kind, hub.EventData) // registered again
		_, err = e.RemoveFolder(e.ctx, "", "/home/ann/app/sub", false)
		is.NoErr(err)                                      // and its folder removed
		is.Equal(take(t, turns, 1)[0].Kind, hub.EventData) // announced, though git can no longer place it
	})
}

// A worktree made or removed by hand, which no operation of the Hub's
// announced, is announced once an inventory read notices it; a read that
// finds nothing new announces nothing.
func TestAWorktreeMadeByHandIsAnnouncedWhenAReadNoticesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		turns := reader(t.Context(), e.open(worktrees()))
		take(t, turns, 2) // the attach's invalidation and ready
		_, err := e.WorktreeInventory(e.ctx, e.sess, e.app)
		is.NoErr(err)        // the first read sets what was seen
		is.True(idle(turns)) // and announces nothing
		is.NoErr(e.git.AddWorktree(e.ctx, hub.AddWorktreeRequest{Main: "/home/ann/app", Dest: "/home/ann/x",
			Mode: hub.NewBranch, Branch: "x", Base: "main"})) // git worktree add, by hand
		_, err = e.WorktreeInventory(e.ctx, e.sess, e.app)
		is.NoErr(err)
		is.Equal(take(t, turns, 1)[0].Kind, hub.EventData) // the read noticed it
		_, err = e.WorktreeInventory(e.ctx, e.sess, e.app)
		is.NoErr(err)
		is.True(idle(turns)) // once
	})
}

func TestRemovedSubscriptionsSendNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		// Nothing reads yet, so the attach's envelopes stay queued.
		s := e.open(worktrees())
		err := e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), hub.SubscriptionChange{Remove: []hub.SubKey{{Topic: hub.TopicWorktrees}}})
		is.NoErr(err) // remove
		turns := reader(t.Context(), s)
		is.True(idle(turns)) // what it had queued is purged

		e.dir("/home/ann/app/sub")
		e.register("/home/ann/app/sub")
		is.True(idle(turns)) // and nothing new arrives

		err = e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), hub.SubscriptionChange{Add: []hub.Subscription{worktrees()}})
		is.NoErr(err)                       // added again
		is.Equal(len(take(t, turns, 2)), 2) // a fresh invalidation and ready
	})
}

func TestOnlyTheOpeningSessionChangesAStream(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t)
	mine := e.sess
	other, _ := e.login()
	s := e.open()
	change := hub.SubscriptionChange{Add: []hub.Subscription{worktrees()}}

	err := e.UpdateLiveSubscriptions(e.ctx, other, s.ID(), change)
	is.Equal(hub.KindOf(err), hub.Forbidden)                          // another session of the same user
	is.Equal(hub.MessageOf(err), "stream belongs to another session") // says so
	err = e.UpdateLiveSubscriptions(e.ctx, mine, "nope", change)
	is.Equal(hub.KindOf(err), hub.NotFound)        // unknown stream
	is.Equal(hub.MessageOf(err), "unknown stream") // says so
	s.Close()
	err = e.UpdateLiveSubscriptions(e.ctx, mine, s.ID(), change)
	is.Equal(hub.KindOf(err), hub.NotFound) // an ended stream is unknown
}

func TestKeepalivesAndTheSessionsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		turns := reader(t.Context(), e.open())

		is.True(idle(turns)) // nothing before the interval
		e.clock.Advance(live.KeepaliveInterval - time.Second)
		is.True(idle(turns)) // nor just before it
		e.clock.Advance(time.Second)
		turn := <-turns
		is.True(turn.keepalive)     // a keepalive after 15 s of silence
		is.Equal(len(turn.envs), 0) // carrying nothing

		is.NoErr(e.Logout(e.ctx, e.id)) // logout
		turn = <-turns
		is.True(errors.Is(turn.err, live.ErrEnded)) // ends the session's streams
	})
}

func TestAnExpiredSessionsStreamEndsAtTheNextKeepalive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		turns := reader(t.Context(), e.open())
		is.True(idle(turns)) // waiting
		e.clock.Set(e.sess.ExpiresAt.Add(time.Second))
		turn := <-turns
		is.True(errors.Is(turn.err, live.ErrEnded)) // the keepalive check ends it
	})
}

func TestAChangeDoesNotWaitOnAStuckWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		s := e.open(worktrees())
		stuck, release := make(chan struct{}), make(chan struct{})
		go s.Next(t.Context(), func([]live.Envelope, bool) error {
			close(stuck)
			<-release // a client that stopped reading
			return nil
		})
		<-stuck
		defer close(release)
		answered := make(chan error, 1)
		go func() {
			answered <- e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), hub.SubscriptionChange{Remove: []hub.SubKey{{Topic: hub.TopicWorktrees}}})
		}()
		synctest.Wait()
		select {
		case err := <-answered:
			t.Fatalf("answered %v while the batch was still being written", err)
		default:
		}
		e.clock.Advance(5 * time.Second)
		err := <-answered
		is.Equal(hub.KindOf(err), hub.NotFound) // a stuck writer's stream is ended: reconnect
		select {
		case <-s.Done():
		default:
			t.Fatal("the stream is still open")
		}
	})
}

func TestKeepalivesFollowTheLastWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		turns := reader(t.Context(), e.open(worktrees()))
		take(t, turns, 2)
		e.clock.Advance(10 * time.Second)
		e.dir("/home/ann/app/sub")
		e.register("/home/ann/app/sub")
		take(t, turns, 1) // traffic 10 s in
		e.clock.Advance(live.KeepaliveInterval - time.Second)
		is.True(idle(turns)) // no keepalive 14 s after it, though 24 s after the open
		e.clock.Advance(time.Second)
		turn := <-turns
		is.True(turn.keepalive) // one 15 s after the last write
	})
}

func TestARefusedChangeChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newLiveEnv(t)
		var docs []hub.Subscription
		for i := range hub.MaxLiveSubscriptions {
			docs = append(docs, hub.Subscription{SubKey: hub.SubKey{Topic: hub.TopicDocument, Keyed: true,
				Key: "scope=file&documentId=/home/ann/app/" + string(rune('a'+i)) + ".md"}})
		}
		s := e.open(docs...)
		turns := reader(t.Context(), s)
		take(t, turns, hub.MaxLiveSubscriptions) // unavailable each: app is stopped

		change := hub.SubscriptionChange{Remove: []hub.SubKey{docs[0].SubKey}, Add: []hub.Subscription{worktrees(), worktrees()}}
		change.Add[1].SubKey = hub.SubKey{Topic: hub.TopicInventory}
		err := e.UpdateLiveSubscriptions(e.ctx, e.sess, s.ID(), change)
		is.Equal(hub.KindOf(err), hub.Invalid)                 // 17 would remain
		is.Equal(hub.MessageOf(err), "too many subscriptions") // says so
		is.True(silent(turns))                                 // nothing was added

		_, err = e.StartWorkspace(e.ctx, e.app)
		is.NoErr(err)
		data := 0
		for _, env := range take(t, turns, 2*hub.MaxLiveSubscriptions) {
			if env.Kind == hub.EventData {
				data++
			}
		}
		is.Equal(data, hub.MaxLiveSubscriptions) // and nothing was removed: every document gets its snapshot
	})
}
