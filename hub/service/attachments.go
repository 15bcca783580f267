package service

import (
	"context"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Attachments are the connections a device session holds open to a
// running workspace session for as long as they last: a terminal
// attached to one of its shells. The transport relays bytes; the core
// knows every attachment, so the events that end a device session or a
// workspace session end its attachments at once, in the same place the
// live streams are ended (changes_devicesession.go,
// changes_workspacesession.go): a logout, a revocation, the session's
// expiry, a password change or the user's removal; the workspace's
// session stopping or ending on its own; the Hub closing.

// MaxAttachmentsPerUser bounds the attachments one user holds at once,
// over every device session and workspace: each is a connection to the
// Hub and one to a child, kept as long as the page stays open.
const MaxAttachmentsPerUser = 16

// The causes an attachment's context ends with (context.Cause): the
// transport tells its client which one.
var (
	// ErrAttachmentSessionEnded: the device session that opened the
	// attachment ended (logout, revocation, expiry, password change,
	// removal of its user).
	ErrAttachmentSessionEnded = hub.Errorf(hub.Unauthenticated, "session ended")
	// ErrAttachmentWorkspaceStopped: the workspace's session ended.
	ErrAttachmentWorkspaceStopped = hub.Errorf(hub.Unavailable, "workspace stopped")
	// ErrAttachmentHubClosing: the Hub is shutting down.
	ErrAttachmentHubClosing = hub.Errorf(hub.Unavailable, "the Hub is shutting down")
)

// attachments is the registry of the attachments held now.
type attachments struct {
	mu     sync.Mutex
	held   map[*attachment]struct{}
	byUser map[string]int
	closed bool
}

// attachment is one held attachment.
type attachment struct {
	owner  hub.DeviceSession
	ws     string
	rw     *runningWorkspace // the workspace session it is attached to
	end    context.CancelCauseFunc
	expiry hub.Timer
}

// HoldAttachment registers an attachment of caller to the running session
// of workspace id and returns its context, which ends (with one of the
// ErrAttachment causes) when the attachment must end, and release, which
// the caller calls once the attachment is over (more than once is
// harmless). The context does not derive from ctx: an attachment outlives
// the request that opened it.
//
// An unknown workspace is NotFound, a stopped one Unavailable, a device
// session no longer active Unauthenticated, and a user already holding
// MaxAttachmentsPerUser attachments RateLimited.
func (h *Hub) HoldAttachment(ctx context.Context, caller hub.DeviceSession, id string) (context.Context, func(), error) {
	rw := h.workspaceSession(id)
	if rw == nil {
		if err := h.CheckRunning(ctx, id); err != nil {
			return nil, nil, err
		}
		return nil, nil, hub.Errorf(hub.Unavailable, "workspace %s is not running", id) // it started just now: try again
	}
	d := caller.ExpiresAt.Sub(h.clock.Now())
	if d <= 0 {
		return nil, nil, errNoDeviceSession
	}
	actx, end := context.WithCancelCause(context.Background())
	a := &attachment{owner: caller, ws: id, rw: rw, end: end}
	// An expiry deletes no row the commit path would report at once; the
	// attachment ends at the session's end of life itself.
	a.expiry = h.clock.AfterFunc(d, func() {
		h.attach.endWhere(ErrAttachmentSessionEnded, func(x *attachment) bool { return x == a })
	})
	if err := h.attach.add(a); err != nil {
		a.expiry.Stop()
		end(err)
		return nil, nil, err
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			h.attach.remove(a)
			end(context.Canceled)
		})
	}
	// Checked after the registration, so an end published from now on
	// finds the attachment, and one published before shows here.
	if _, err := h.activeDeviceSession(ctx, caller.Digest); err != nil {
		release()
		return nil, nil, err
	}
	if h.workspaceSession(id) != rw {
		release()
		return nil, nil, hub.Errorf(hub.Unavailable, "workspace %s is not running", id)
	}
	return actx, release, nil
}

// add registers a, refusing a user over the bound or a closed Hub.
func (r *attachments) add(a *attachment) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrAttachmentHubClosing
	}
	if r.byUser[a.owner.User] >= MaxAttachmentsPerUser {
		return &hub.Error{Kind: hub.RateLimited, Message: "too many terminals attached (at most 16 per user): close one first",
			Details: &hub.Details{RetryAfter: attachRetryAfter}}
	}
	if r.held == nil {
		r.held, r.byUser = map[*attachment]struct{}{}, map[string]int{}
	}
	r.held[a] = struct{}{}
	r.byUser[a.owner.User]++
	return nil
}

// attachRetryAfter is the wait a refused attachment is told: a place
// frees when another terminal closes, which nobody can foresee.
const attachRetryAfter = time.Second

// remove unregisters a (once ended or released).
func (r *attachments) remove(a *attachment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.held[a]; !ok {
		return
	}
	delete(r.held, a)
	if r.byUser[a.owner.User]--; r.byUser[a.owner.User] <= 0 {
		delete(r.byUser, a.owner.User)
	}
	if a.expiry != nil {
		a.expiry.Stop()
	}
}

// endWhere ends, with cause, the attachments keep selects. Their holders
// release them as they finish.
func (r *attachments) endWhere(cause error, keep func(*attachment) bool) {
	r.mu.Lock()
	var ending []*attachment
	for a := range r.held {
		if keep(a) {
			ending = append(ending, a)
		}
	}
	r.mu.Unlock()
	for _, a := range ending {
		a.end(cause)
	}
}

// endDeviceSessions ends the attachments of the device sessions ds.
func (r *attachments) endDeviceSessions(ds ...hub.DeviceSessionDigest) {
	ended := make(map[hub.DeviceSessionDigest]bool, len(ds))
	for _, d := range ds {
		ended[d] = true
	}
	r.endWhere(ErrAttachmentSessionEnded, func(a *attachment) bool { return ended[a.owner.Digest] })
}

// close ends every attachment and refuses new ones.
func (r *attachments) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.endWhere(ErrAttachmentHubClosing, func(*attachment) bool { return true })
}
