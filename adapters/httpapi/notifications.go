package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// NotificationService is the push-notifications family
// (notifications.go).
type NotificationService interface {
	Notifications(ctx context.Context, caller hub.DeviceSession, device string) (hub.NotificationState, error)
	EnrollNotifications(ctx context.Context, caller hub.DeviceSession, raw notify.RawEnrollment) (hub.NotificationState, error)
	RemoveNotifications(ctx context.Context, caller hub.DeviceSession, device string) error
	AcknowledgeNotification(ctx context.Context, caller hub.DeviceSession, device, id string) error
	TestNotification(ctx context.Context, caller hub.DeviceSession, device string) error
}

// Bodies of the family: an enrollment holds a subscription (an endpoint
// of at most 4,096 bytes and two keys) and at most 256 workspace ids;
// 64 KiB is ample, and more is 413.
const (
	enrollBodyLimit = 64 << 10
	ackBodyLimit    = 4 << 10
)

type notificationState struct {
	Configured bool                `json:"configured"`
	PublicKey  *string             `json:"publicKey"`
	Device     *notificationDevice `json:"device"`
}

type notificationDevice struct {
	ID                 string   `json:"id"`
	AllWorkspaces      bool     `json:"allWorkspaces"`
	WorkspaceIDs       []string `json:"workspaceIds"`
	NeedsAnswer        bool     `json:"needsAnswer"`
	Completed          bool     `json:"completed"`
	Active             bool     `json:"active"`
	LastSentAt         *string  `json:"lastSentAt"`
	LastAcknowledgedAt *string  `json:"lastAcknowledgedAt"`
}

func writeNotificationState(w http.ResponseWriter, st hub.NotificationState, err error) error {
	if err != nil {
		return err
	}
	out := notificationState{Configured: st.Configured}
	if st.PublicKey != nil {
		k := base64.RawURLEncoding.EncodeToString(st.PublicKey)
		out.PublicKey = &k
	}
	if d := st.Device; d != nil {
		ids := d.WorkspaceIDs
		if ids == nil {
			ids = []string{}
		}
		out.Device = &notificationDevice{ID: d.ID, AllWorkspaces: d.AllWorkspaces, WorkspaceIDs: ids, NeedsAnswer: d.NeedsAnswer,
			Completed: d.Completed, Active: d.Active, LastSentAt: optionalTime(d.LastSentAt), LastAcknowledgedAt: optionalTime(d.LastAcknowledgedAt)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func optionalTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func (a *api) handleGetNotifications(w http.ResponseWriter, r *http.Request, c caller) error {
	st, err := a.notifications.Notifications(r.Context(), c.DeviceSession, r.URL.Query().Get("device"))
	return writeNotificationState(w, st, err)
}

func (a *api) handleEnrollNotifications(w http.ResponseWriter, r *http.Request, c caller) error {
	var raw notify.RawEnrollment
	if err := httpjson.Decode(r, enrollBodyLimit, true, &raw); err != nil {
		return err
	}
	st, err := a.notifications.EnrollNotifications(r.Context(), c.DeviceSession, raw)
	return writeNotificationState(w, st, err)
}

func (a *api) handleRemoveNotifications(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := a.notifications.RemoveNotifications(r.Context(), c.DeviceSession, r.URL.Query().Get("device")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"removed": true})
	return nil
}

type notificationAck struct {
	Device string `json:"device"`
	ID     string `json:"id"`
}

func (a *api) handleAcknowledgeNotification(w http.ResponseWriter, r *http.Request, c caller) error {
	var req notificationAck
	if err := httpjson.Decode(r, ackBodyLimit, true, &req); err != nil {
		return err
	}
	if err := a.notifications.AcknowledgeNotification(r.Context(), c.DeviceSession, req.Device, req.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"acknowledged": true})
	return nil
}

func (a *api) handleTestNotification(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := a.notifications.TestNotification(r.Context(), c.DeviceSession, r.URL.Query().Get("device")); err != nil {
		setRetryAfter(w, err)
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"queued": true})
	return nil
}
