package notify

import (
	"slices"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// A device's coverage: which workspaces and categories it receives, and
// since when.

// Categories returns the categories d has enabled.
func Categories(d hub.PushDevice) []hub.NotificationCategory {
	var out []hub.NotificationCategory
	if d.NeedsAnswer {
		out = append(out, hub.CategoryNeedsAnswer)
	}
	if d.Completed {
		out = append(out, hub.CategoryCompleted)
	}
	return out
}

// Wants reports whether d has category c enabled.
func Wants(d hub.PushDevice, c hub.NotificationCategory) bool {
	return (c == hub.CategoryNeedsAnswer && d.NeedsAnswer) || (c == hub.CategoryCompleted && d.Completed)
}

// Covered returns the workspaces d covers among the registered ones, in
// registration order: every one with AllWorkspaces (evaluated now, so a
// workspace registered later is included), else its selection.
func Covered(d hub.PushDevice, registered []string) []string {
	if d.AllWorkspaces {
		return slices.Clone(registered)
	}
	var out []string
	for _, ws := range registered {
		if slices.Contains(d.WorkspaceIDs, ws) {
			out = append(out, ws)
		}
	}
	return out
}

// Cutoff returns d's cutoff for workspace ws and category c.
func Cutoff(d hub.PushDevice, ws string, c hub.NotificationCategory) (time.Time, bool) {
	for _, k := range d.Cutoffs {
		if k.WorkspaceID == ws && k.Category == c {
			return k.Since, true
		}
	}
	return time.Time{}, false
}

// Eligible reports whether d is to receive occurrence n of workspace ws:
// its category is enabled, d covers ws, and n happened at or after d's
// cutoff (a device without a cutoff for it has not started covering it
// yet: everything is history).
func Eligible(d hub.PushDevice, ws string, registered []string, n hub.Notification) bool {
	c := n.Kind.Category()
	if c == "" || !Wants(d, c) || !slices.Contains(Covered(d, registered), ws) {
		return false
	}
	since, ok := Cutoff(d, ws, c)
	return ok && !n.CreatedAt.Before(since)
}

// Enroll returns the device an enrollment makes of old (nil for a new
// device), under the login session digest, at now. A cutoff is kept only
// when the device stays under the same login and the category stays
// enabled for a workspace it kept covering; any other covered workspace
// and category starts now, so what happened before is never sent.
func Enroll(old *hub.PushDevice, e Enrollment, id, user string, session hub.DeviceSessionDigest, registered []string, now time.Time) hub.PushDevice {
	d := hub.PushDevice{ID: id, User: user, DeviceSession: session, WorkspaceIDs: slices.Clone(e.WorkspaceIDs),
		AllWorkspaces: e.AllWorkspaces, NeedsAnswer: e.NeedsAnswer, Completed: e.Completed, CreatedAt: now}
	keep := old != nil && old.DeviceSession == session
	if old != nil {
		d.CreatedAt, d.LastSentAt, d.LastAckAt = old.CreatedAt, old.LastSentAt, old.LastAckAt
	}
	for _, ws := range Covered(d, registered) {
		for _, c := range Categories(d) {
			since := now
			if keep && Wants(*old, c) && slices.Contains(Covered(*old, registered), ws) {
				if t, ok := Cutoff(*old, ws, c); ok {
					since = t
				}
			}
			d.Cutoffs = append(d.Cutoffs, hub.PushCutoff{WorkspaceID: ws, Category: c, Since: since})
		}
	}
	return d
}

// Restamp brings d's cutoffs up to date with the registry at now: a
// covered workspace without a cutoff (registered after an AllWorkspaces
// enrollment) starts now; cutoffs of workspaces that left the registry or
// the coverage are dropped. changed reports whether anything did.
func Restamp(d hub.PushDevice, registered []string, now time.Time) (_ hub.PushDevice, changed bool) {
	covered := Covered(d, registered)
	var cutoffs []hub.PushCutoff
	for _, k := range d.Cutoffs {
		if slices.Contains(covered, k.WorkspaceID) && Wants(d, k.Category) {
			cutoffs = append(cutoffs, k)
		}
	}
	changed = len(cutoffs) != len(d.Cutoffs)
	for _, ws := range covered {
		for _, c := range Categories(d) {
			if _, ok := Cutoff(hub.PushDevice{Cutoffs: cutoffs}, ws, c); !ok {
				cutoffs = append(cutoffs, hub.PushCutoff{WorkspaceID: ws, Category: c, Since: now})
				changed = true
			}
		}
	}
	d.Cutoffs = cutoffs
	return d, changed
}
