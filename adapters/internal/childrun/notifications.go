package childrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// OpenNotifications opens the session's notification feed over its
// socket: a GET of childproto's NotificationsPath from cursor, read as
// Server-Sent Events into frames, each decoded strictly, with at most
// childproto.MaxNotificationFrameBytes per frame (a larger one fails the
// feed). Like OpenFeed it returns once the child has answered with the
// headers of an event stream; anything else, and an ended or unreachable
// session, is Unavailable. A cursor no frame can carry (longer than
// childproto.MaxNotificationCursorBytes, or not printable ASCII: never
// one the feed gave) is Invalid, without asking.
func (s *Session) OpenNotifications(ctx context.Context, cursor string) (hub.NotificationFeed, error) {
	return s.feeds.openNotifications(ctx, cursor, childproto.MaxNotificationFrameBytes)
}

// openNotifications opens the notification feed from cursor, with frames
// of at most maxFrame bytes.
func (src feedSource) openNotifications(ctx context.Context, cursor string, maxFrame int) (hub.NotificationFeed, error) {
	path, err := childproto.NotificationsRequest{Cursor: cursor}.URI()
	if err != nil {
		return nil, hub.Wrap(hub.Invalid, err, "not a cursor of the notification feed")
	}
	resp, cancel, err := src.get(ctx, path)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		err = hub.Wrap(hub.Unavailable, fmt.Errorf("notification feed answered %s", resp.Status), "session refused the notification feed")
	} else {
		err = acceptStream(resp)
	}
	if err != nil {
		resp.Body.Close() // the connection is never reused: nothing to drain
		cancel()
		return nil, err
	}
	f := newStream[hub.NotificationFrame](cancel)
	order := noticeOrder{resumes: cursor != ""}
	go f.read(resp.Body, maxFrame, src.done, func(ev childproto.Event) (hub.NotificationFrame, bool, bool, error) {
		fr, err := childproto.DecodeNotificationFrame(ev)
		if err == nil {
			err = order.check(fr)
		}
		return fr, err == nil, false, err
	})
	return f, nil
}

// noticeOrder holds a notification feed to the order of the port's
// contract (hub.NotificationFeed): a snapshot only first, of reason
// "initial" when the feed was opened without a cursor (and then first
// without fail) and "gap" when with one; one ready. Used by the reader
// alone.
type noticeOrder struct {
	resumes bool // opened with a cursor
	frames  int
	ready   bool
}

func (o *noticeOrder) check(fr hub.NotificationFrame) error {
	first := o.frames == 0
	o.frames++
	switch {
	case fr.Type == hub.NoticeSnapshot && !first:
		return errors.New("a snapshot after the first frame")
	case fr.Type == hub.NoticeSnapshot && (fr.Reason == childproto.NoticeReasonGap) != o.resumes:
		return errors.New("a snapshot of the wrong reason")
	case first && !o.resumes && fr.Type != hub.NoticeSnapshot:
		return errors.New("no snapshot first, without a cursor")
	case fr.Type == hub.NoticeReady && o.ready:
		return errors.New("a second ready")
	}
	o.ready = o.ready || fr.Type == hub.NoticeReady
	return nil
}
