package live_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// emptyHub is a Hub with nothing registered and nothing running, as a
// broker's host: enough for what needs no workspace.
type emptyHub struct{}

func (emptyHub) Registered(context.Context, string) (bool, error)                  { return false, nil }
func (emptyHub) Workspaces() []hub.Workspace                                       { return nil }
func (emptyHub) WorkspaceSession(string) hub.WorkspaceSession                      { return nil }
func (emptyHub) DeviceSessionActive(context.Context, hub.DeviceSessionDigest) bool { return true }
func (emptyHub) Repository(hub.Workspace) string                                   { return "" }
func (emptyHub) FolderRepository(string) string                                    { return "" }
func (emptyHub) CommitMarks(context.Context, func(live.MarkWrites) error) error {
	return hub.Errorf(hub.NotFound, "no workspace is registered")
}

// Live subscriptions: whatever a client sends as a topic, key and cursor
// is accepted only within the contract's bounds, and a document key the
// Hub accepts has one canonical spelling that parses back to itself.
func FuzzSubscription(f *testing.F) {
	for _, seed := range []struct{ topic, key, cursor string }{
		{"document", "", ""}, {"document", "compareTarget=last-commit&scope=file&documentId=/a/b", "e.1"},
		{"document", "scope=file", ""}, {"document", "documentId=%2Fa&scope=file&scope=file", ""},
		{"conversation", "oc:1", "c9"}, {"inventory", "x", ""}, {"activity", "", ""}, {"weather", "", ""},
		{"document", "compareTarget=base&documentId=/a/../b&scope=file", ""}, {"document", "%zz", "\xff"},
	} {
		f.Add(seed.topic, seed.key, seed.cursor, true)
	}
	b := live.New(live.Config{Clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))}, emptyHub{})
	f.Cleanup(func() { b.Close(); b.Wait() })
	f.Fuzz(func(t *testing.T, topic, key, cursor string, keyed bool) {
		sub := hub.Subscription{SubKey: hub.SubKey{Topic: hub.Topic(topic), Key: key, Keyed: keyed}, Cursor: cursor}
		if err := b.CheckSubscription(sub); err != nil {
			if hub.KindOf(err) != hub.Invalid {
				t.Fatalf("refused as %v: %v", hub.KindOf(err), err)
			}
			return
		}
		if len(key) > hub.MaxLiveKeyBytes || len(cursor) > hub.MaxLiveCursorBytes || !utf8.ValidString(key+cursor) {
			t.Fatalf("accepted out of bounds: key %d bytes, cursor %d bytes", len(key), len(cursor))
		}
		if topic != "document" {
			return
		}
		c, err := hub.ParseDocumentKey(key)
		if err != nil {
			t.Fatalf("accepted document key %q does not parse: %v", key, err)
		}
		again, err := hub.ParseDocumentKey(c.String())
		if err != nil || again != c || again.String() != c.String() {
			t.Fatalf("key %q: canonical %q parses back as %+v (%v)", key, c.String(), again, err)
		}
	})
}
