package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// deadline bounds every wait of these tests.
const deadline = 10 * time.Second

var epoch = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// rig is a Manager over the fakes.
type rig struct {
	t      *testing.T
	rt     *fakes.AgentRuntime
	store  *fakes.ConversationStore
	clock  *fakes.Clock
	bounds chat.Bounds
	m      *chat.Manager
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newBoundedRig(t, chat.Bounds{})
}

// newBoundedRig is a rig whose Manager keeps agents' output within b.
func newBoundedRig(t *testing.T, b chat.Bounds) *rig {
	t.Helper()
	rt := fakes.NewAgentRuntime(
		chat.AgentDescriptor{ID: "scripted", Name: "Scripted", Availability: chat.AgentAvailable},
		chat.AgentDescriptor{ID: "absent", Name: "Absent", Availability: chat.AgentNotInstalled})
	r := &rig{t: t, rt: rt, store: &fakes.ConversationStore{}, clock: fakes.NewClock(epoch), bounds: b}
	r.m = r.manager()
	return r
}

// manager starts a Manager over the rig's fakes (a new child, after a
// restart, when one ran before).
func (r *rig) manager() *chat.Manager {
	r.t.Helper()
	m, err := chat.New(chat.Config{Runtime: r.rt, Store: r.store, Dir: "/work/space", Clock: r.clock, Bounds: r.bounds})
	if err != nil {
		r.t.Fatalf("chat.New: %v", err)
	}
	r.t.Cleanup(m.Close)
	return m
}

func (r *rig) create() string {
	r.t.Helper()
	s, err := r.m.Create(context.Background(), "scripted", "")
	if err != nil {
		r.t.Fatalf("create: %v", err)
	}
	return s.ID
}

func (r *rig) send(id, text string) chat.SendResult {
	r.t.Helper()
	res, err := r.m.Send(context.Background(), id, chat.Message{Text: text})
	if err != nil {
		r.t.Fatalf("send %q: %v", text, err)
	}
	return res
}

// turn returns the next turn the fake agent receives.
func (r *rig) turn() *fakes.AgentTurn {
	r.t.Helper()
	select {
	case t := <-r.rt.Turns:
		return t
	case <-time.After(deadline):
		r.t.Fatal("no turn reached the agent")
		return nil
	}
}

// event is a decoded ChatEvent.
type event struct {
	Generation     string           `json:"generation"`
	Sequence       int64            `json:"sequence"`
	ConversationID string           `json:"conversationId"`
	Type           string           `json:"type"`
	Item           map[string]any   `json:"item"`
	ItemID         string           `json:"itemId"`
	Delta          string           `json:"delta"`
	Status         string           `json:"status"`
	Message        string           `json:"message"`
	Queued         []map[string]any `json:"queued"`
	Change         map[string]any   `json:"change"`
	Reason         string           `json:"reason"`
	raw            []byte
	cursor         string
}

// reader follows one conversation's events, as a feed does.
type reader struct {
	r      *rig
	id     string
	cursor string
	seen   []event
}

func (r *rig) follow(id string) *reader {
	r.t.Helper()
	head, err := r.m.Head(id)
	if err != nil {
		r.t.Fatalf("head: %v", err)
	}
	return &reader{r: r, id: id, cursor: head}
}

// until reads events until one satisfies ok, and returns it.
func (rd *reader) until(what string, ok func(event) bool) event {
	t := rd.r.t
	t.Helper()
	timeout := time.After(deadline)
	for {
		b, err := rd.r.m.Events(rd.id, rd.cursor)
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if b.Resync != nil {
			t.Fatalf("unexpected resync %s while waiting for %s", b.Resync, what)
		}
		for _, f := range b.Frames {
			var ev event
			if err := json.Unmarshal(f.Data, &ev); err != nil {
				t.Fatalf("event does not decode: %v", err)
			}
			ev.raw, ev.cursor = f.Data, f.Cursor
			rd.cursor = f.Cursor
			rd.seen = append(rd.seen, ev)
			if ok(ev) {
				return ev
			}
		}
		if b.Ended {
			t.Fatalf("the conversation ended while waiting for %s", what)
		}
		select {
		case <-b.Wait:
		case <-timeout:
			t.Fatalf("no %s within %s; saw %d events", what, deadline, len(rd.seen))
		}
	}
}

// status waits for the conversation to reach status.
func (rd *reader) status(s chat.Status) event {
	return rd.until("status "+string(s), func(ev event) bool {
		return ev.Type == chat.EventStatus && ev.Status == string(s)
	})
}

// items returns the snapshot's items decoded.
func items(t *testing.T, s chat.Snapshot) []map[string]any {
	t.Helper()
	out := make([]map[string]any, 0, len(s.Items))
	for _, raw := range s.Items {
		var it map[string]any
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatalf("item does not decode: %v", err)
		}
		out = append(out, it)
	}
	return out
}

// ofKind returns the items of kind.
func ofKind(its []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, it := range its {
		if it["kind"] == kind {
			out = append(out, it)
		}
	}
	return out
}

// isKind asserts err is a *hub.Error of kind k.
func isKind(is *is.I, err error, k hub.Kind) {
	is.Helper()
	is.True(err != nil)          // an error
	is.Equal(hub.KindOf(err), k) // of the expected kind
}

// contains reports whether s holds sub.
func contains(s, sub string) bool { return strings.Contains(s, sub) }

// activity waits until the manager's activity is want.
func (r *rig) activity(want chat.Activity) {
	r.t.Helper()
	timeout := time.After(deadline)
	for {
		a, wait := r.m.Activity()
		if a == want {
			return
		}
		select {
		case <-wait:
		case <-timeout:
			r.t.Fatalf("activity stayed %+v, want %+v", a, want)
		}
	}
}

// drain reads the events already logged, without waiting.
func (rd *reader) drain() {
	rd.r.t.Helper()
	b, err := rd.r.m.Events(rd.id, rd.cursor)
	if err != nil || b.Resync != nil {
		rd.r.t.Fatalf("events: %v %s", err, b.Resync)
	}
	for _, f := range b.Frames {
		var ev event
		if err := json.Unmarshal(f.Data, &ev); err != nil {
			rd.r.t.Fatalf("event does not decode: %v", err)
		}
		ev.raw, ev.cursor = f.Data, f.Cursor
		rd.cursor = f.Cursor
		rd.seen = append(rd.seen, ev)
	}
}
