package service

import (
	"context"
	"slices"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// liveHost is the Hub as its live broker sees it (live.Host): the only way
// from the broker to the service.
type liveHost struct{ h *Hub }

var _ live.Host = liveHost{}

func (l liveHost) Registered(ctx context.Context, ws string) (bool, error) {
	reg, err := l.h.registry(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(reg, func(w hub.Workspace) bool { return w.ID == ws }), nil
}

func (l liveHost) Workspaces() []hub.Workspace { return l.h.st.workspaces() }

func (l liveHost) WorkspaceSession(ws string) hub.WorkspaceSession {
	if rw := l.h.workspaceSession(ws); rw != nil {
		return rw.rs
	}
	return nil
}

func (l liveHost) DeviceSessionActive(ctx context.Context, d hub.DeviceSessionDigest) bool {
	_, err := l.h.activeDeviceSession(ctx, d)
	return hub.KindOf(err) != hub.Unauthenticated
}

func (l liveHost) Repository(w hub.Workspace) string { return l.h.commonDir(w) }

func (l liveHost) FolderRepository(dir string) string { return l.h.folderOf(dir).repo.CommonDir }

// CommitMarks commits fn's writes through the commit path, where they are
// recorded like every other write (writes.go).
func (l liveHost) CommitMarks(ctx context.Context, fn func(live.MarkWrites) error) error {
	return l.h.commit(ctx, func(tx *writes) error { return fn(tx) })
}

// The live stream's operations, as the broker serves them.

// OpenLive opens a live stream (live.Broker.Open: its contract).
func (h *Hub) OpenLive(ctx context.Context, caller hub.DeviceSession, ws string, activity bool, subs []hub.Subscription) (*live.Stream, error) {
	return h.live.Open(ctx, caller, ws, activity, subs)
}

// UpdateLiveSubscriptions changes the subscriptions of the caller's
// stream (live.Broker.UpdateSubscriptions: its contract).
func (h *Hub) UpdateLiveSubscriptions(ctx context.Context, caller hub.DeviceSession, streamID string, change hub.SubscriptionChange) error {
	return h.live.UpdateSubscriptions(ctx, caller, streamID, change)
}

// CheckSubscription validates one subscription
// (live.Broker.CheckSubscription: its contract).
func (h *Hub) CheckSubscription(s hub.Subscription) error { return h.live.CheckSubscription(s) }
