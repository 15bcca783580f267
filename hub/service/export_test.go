package service

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	apidoc "github.com/wharfhub/wharf/api"
	"github.com/wharfhub/wharf/hub"
)

// contract is api/openapi.yaml, loaded once.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

// CheckSchema validates data against the named schema of api/openapi.yaml,
// for the external tests' check of every envelope they read.
func CheckSchema(name string, data []byte) error {
	doc, err := contract()
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return doc.Components.Schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// AddressKey is the key of a client address in the login limits.
var AddressKey = addressKey

// SettingDeviceKey is the setting holding the device token key.
const SettingDeviceKey = settingDeviceKey

// WorktreesShown counts the linked worktrees whose state facts the Hub
// keeps in memory.
func WorktreesShown(h *Hub) int {
	h.wt.mu.Lock()
	defer h.wt.mu.Unlock()
	return len(h.wt.trees)
}

// PushJournal returns the delivery journal as the engine holds it.
func PushJournal(h *Hub) []hub.PushDelivery {
	h.push.mu.Lock()
	defer h.push.mu.Unlock()
	out := make([]hub.PushDelivery, 0, len(h.push.deliveries))
	for _, d := range h.push.deliveries {
		out = append(out, d)
	}
	return out
}

// WaitPushJournal waits until ok holds of the journal, which is checked
// again at every change of it, or until ctx ends.
func WaitPushJournal(ctx context.Context, h *Hub, ok func([]hub.PushDelivery) bool) ([]hub.PushDelivery, error) {
	for {
		h.push.mu.Lock()
		changed := h.push.journalChanged()
		h.push.mu.Unlock()
		if j := PushJournal(h); ok(j) {
			return j, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return PushJournal(h), ctx.Err()
		}
	}
}

// PushStep runs one round of the push scheduler now, on the caller's
// goroutine (the scheduler's own rounds may run too: a round is safe to
// repeat).
func PushStep(h *Hub) { h.push.step(h.push.ctx) }

// PushObserved reports the workspaces whose notification feeds the Hub
// observes.
func PushObserved(h *Hub) []string {
	h.push.mu.Lock()
	defer h.push.mu.Unlock()
	var out []string
	for ws := range h.push.observers {
		out = append(out, ws)
	}
	return out
}

// LockWorkspace takes workspace id's lifecycle lock, as a start or stop in
// flight holds it, until unlock is called.
func LockWorkspace(ctx context.Context, h *Hub, id string) (unlock func(), err error) {
	return h.wsLocks.Lock(ctx, id)
}

// WaitState waits until ok holds of the Hub's state, which is read again
// at every change of its revision, or until ctx ends.
func WaitState(ctx context.Context, h *Hub, ok func(*hub.HubState) bool) (*hub.HubState, error) {
	for {
		changed := h.st.changedSince()
		s, err := h.State(ctx, hub.DeviceSession{})
		if err != nil {
			return nil, err
		}
		if ok(s) {
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}
