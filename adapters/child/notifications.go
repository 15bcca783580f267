package child

import (
	"context"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The child's side of the notification feed (childproto's
// NotificationsPath), fed by the conversation core's notices
// (chat.Manager.Notices). Reading it never starts an agent.

// noticeSource is what the feed reads: the core's Notices.
type noticeSource func(cursor string) chat.NoticeBatch

// serveNotifications answers the notification feed of the request's
// cursor: the core's snapshot, or the notices after the cursor, then
// ready, then each notice as it comes, with a keepalive every keepAlive
// of quiet. The stream ends when the client goes, when the child stops
// (the server's base context, or the core closing), or when the reader
// fell behind what the core keeps: the Hub then opens the feed again from
// its cursor and meets a gap there. Without a core nothing is ever
// announced (noNotices).
func serveNotifications(m *chat.Manager, keepAlive time.Duration) http.HandlerFunc {
	notices := noNotices
	if m != nil {
		notices = m.Notices
	}
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := childproto.ParseNotificationsQuery(r.URL.Query())
		if err != nil {
			childproto.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		s, err := childproto.OpenStream(w)
		if err != nil {
			return
		}
		streamNotices(r.Context(), s, notices, req.Cursor, keepAlive)
	}
}

// streamNotices writes the feed from cursor until ctx ends, a write
// fails, the core closes, or the reader falls behind.
func streamNotices(ctx context.Context, s *childproto.StreamWriter, notices noticeSource, cursor string, keepAlive time.Duration) {
	b := notices(cursor)
	if writeNotices(s, b.Frames) != nil {
		return
	}
	cursor = b.Cursor
	if writeNotices(s, []hub.NotificationFrame{{Type: hub.NoticeReady, Cursor: cursor}}) != nil || s.Flush() != nil {
		return
	}
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for !b.Ended {
		if !await(ctx, s, b.Wait, t) {
			return
		}
		b = notices(cursor)
		if len(b.Frames) > 0 && b.Frames[0].Type == hub.NoticeSnapshot {
			return // fell behind: the Hub reopens from its cursor
		}
		if len(b.Frames) == 0 {
			continue
		}
		if writeNotices(s, b.Frames) != nil || s.Flush() != nil {
			return
		}
		cursor = b.Cursor
	}
}

// writeNotices writes frames without flushing them. A frame the protocol
// refuses cannot come from the core (it bounds what it announces as the
// protocol does); were one to, it is left out, and a snapshot keeps the
// notices that can be sent, rather than the Hub meeting the same frame on
// every reconnect.
func writeNotices(s *childproto.StreamWriter, frames []hub.NotificationFrame) error {
	for _, fr := range frames {
		ev, err := childproto.EncodeNotificationFrame(fr)
		if err != nil && fr.Type == hub.NoticeSnapshot {
			ev, err = childproto.EncodeNotificationFrame(sendable(fr))
		}
		if err != nil {
			continue
		}
		if err := s.Write(ev); err != nil {
			return err
		}
	}
	return nil
}

// sendable is the snapshot fr without the notices the protocol refuses.
func sendable(fr hub.NotificationFrame) hub.NotificationFrame {
	kept := make([]hub.Notification, 0, len(fr.Pending))
	for _, n := range fr.Pending {
		if _, err := childproto.EncodeNotificationFrame(hub.NotificationFrame{Type: hub.NoticeEvent, Cursor: fr.Cursor, Notification: n}); err == nil {
			kept = append(kept, n)
		}
	}
	fr.Pending = kept
	return fr
}

// idleCursor is the one cursor of a child without a core.
const idleCursor = "idle:0"

// noNotices is the notification feed of a child without a core: nothing
// is pending nor ever announced, so its one cursor never moves and always
// resumes; any other is a gap.
func noNotices(cursor string) chat.NoticeBatch {
	b := chat.NoticeBatch{Cursor: idleCursor} // a nil Wait: nothing ever follows
	switch cursor {
	case idleCursor:
	case "":
		b.Frames = []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: idleCursor, Reason: chat.NoticeInitial, Pending: []hub.Notification{}}}
	default:
		b.Frames = []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: idleCursor, Reason: chat.NoticeGap, Pending: []hub.Notification{}}}
	}
	return b
}
