package fakes

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The notification feed of fake sessions (hub.NotificationSource). Each
// running session keeps what a real one does: a log of the notices it
// announced, under cursors "<epoch>:<sequence>" of an epoch of its own,
// and the notices still pending. Unscripted, OpenNotifications answers as
// the contract says: without a cursor a snapshot (Reason "initial") of
// what is pending; with a cursor of this session's log the notices after
// it; with any other (an earlier session's, one ForgetNotices dropped) a
// snapshot of Reason "gap"; then a NoticeReady. The log keeps every
// notice until ForgetNotices: tests are small.
//
// A test drives it per workspace, through its running session:
//
//   - Notify(ws, n) announces n: every open feed gets a NoticeEvent, and a
//     needsAnswer kind is pending until Resolve(ws, n.ID), which sends a
//     NoticeResolved. Notice builds an n with the identity a real session
//     gives it.
//   - NoticeSnapshot(ws, reason) is the snapshot the session would send
//     now; NotificationFeed.Send hands any frames to one open feed as they
//     are (a snapshot mid-feed, a frame the contract forbids), End ends it
//     (nil: io.EOF, an orderly end), and Crash or Stop end every feed of
//     the session as Unavailable.
//   - FailNextNotifications(ws, err) makes the next OpenNotifications fail
//     (err nil: Unavailable), once per call; HoldNotifications(ws) makes
//     them wait until released or their ctx ends (then Unavailable);
//     SetNotificationOpener(ws, f) decides every open by its cursor.
//   - NotificationOpens(ws) and WaitNotificationOpens(ctx, ws, n) report
//     the cursor of every OpenNotifications call, failed ones included, in
//     order; WaitNotificationFeed(ctx, ws, n) returns the n-th feed that
//     opened (its Cursor is what it was opened with).
//
// Nothing sleeps: every wait is on a channel, bounded by the caller's ctx.

// NotificationOpener decides an OpenNotifications of a fake session from
// the cursor it was asked: an error fails it (the error is returned as it
// is), nil lets the session answer as it does unscripted. It runs without
// the Backend's lock and may block, until ctx ends.
type NotificationOpener func(ctx context.Context, cursor string) error

// notifyScript is the Backend's record of the notification feeds its
// sessions opened and of how they answer. Guarded by Backend.mu.
type notifyScript struct {
	opens    map[string][]string // the cursor of every OpenNotifications, by workspace
	opened   map[string][]*NotificationFeed
	openers  map[string]NotificationOpener
	failNext map[string][]error
	holds    map[string]chan struct{}
	changed  chan struct{} // closed and replaced whenever a feed opens or is asked for
}

// sessionNotices is one session's log and pending notices. Guarded by
// Backend.mu.
type sessionNotices struct {
	epoch   string
	first   int                     // the sequence of log[0]
	log     []hub.NotificationFrame // events and resolutions, in order
	pending []hub.Notification
}

func newSessionNotices() *sessionNotices { return &sessionNotices{epoch: uuid.NewString(), first: 1} }

// head is the sequence of the last notice; 0 before any.
func (n *sessionNotices) head() int { return n.first + len(n.log) - 1 }

func (n *sessionNotices) cursorOf(seq int) string { return n.epoch + ":" + strconv.Itoa(seq) }

// after returns the notices after cursor; false when it is not one of
// this log's.
func (n *sessionNotices) after(cursor string) ([]hub.NotificationFrame, bool) {
	epoch, text, _ := strings.Cut(cursor, ":")
	seq, err := strconv.Atoi(text)
	if epoch != n.epoch || err != nil || strconv.Itoa(seq) != text || seq > n.head() || seq < n.first-1 {
		return nil, false
	}
	return slices.Clone(n.log[seq-n.first+1:]), true
}

func (n *sessionNotices) snapshot(reason string) hub.NotificationFrame {
	return hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: n.cursorOf(n.head()), Reason: reason,
		Pending: append([]hub.Notification{}, n.pending...)}
}

// opening is what a feed opened from cursor starts with.
func (n *sessionNotices) opening(cursor string) []hub.NotificationFrame {
	var frames []hub.NotificationFrame
	switch resumed, ok := n.after(cursor); {
	case cursor == "":
		frames = []hub.NotificationFrame{n.snapshot(chat.NoticeInitial)}
	case ok:
		frames = resumed
	default:
		frames = []hub.NotificationFrame{n.snapshot(chat.NoticeGap)}
	}
	return append(frames, hub.NotificationFrame{Type: hub.NoticeReady, Cursor: n.cursorOf(n.head())})
}

// NotificationFeed is a notification feed a fake session opened. The test
// drives it with Send and End (see the file's comment). Safe for
// concurrent use.
type NotificationFeed struct {
	// Cursor is what OpenNotifications was asked to resume after.
	Cursor string

	s *workspaceSession
	*frameQueue[hub.NotificationFrame]
}

// Notice is the notification of kind with sourceID in conversationID
// (an "<agent>:<session>" id) at at, under the identity a real session
// gives it (chat.NotificationID).
func Notice(conversationID string, kind hub.NotificationKind, sourceID string, at time.Time) hub.Notification {
	agent, _, _ := strings.Cut(conversationID, ":")
	id, ok := chat.NotificationID(agent, conversationID, kind, sourceID)
	if !ok {
		panic("fakes: a notice too long to announce")
	}
	return hub.Notification{ID: id, ConversationID: conversationID, SourceID: sourceID, Kind: kind, CreatedAt: at}
}

// Notify announces n on the notification feed of ws's running session and
// returns its cursor: every open feed gets the NoticeEvent, and n is
// pending, when its kind waits for an answer, until Resolve. Without a
// running session of ws it does nothing and returns "".
func (b *Backend) Notify(ws string, n hub.Notification) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.running[ws]
	if s == nil {
		return ""
	}
	if n.Kind.Category() == hub.CategoryNeedsAnswer {
		s.notices.pending = append(s.notices.pending, n)
	}
	return b.appendNoticeLocked(s, hub.NotificationFrame{Type: hub.NoticeEvent, Notification: n})
}

// Resolve says the pending notification id of ws's running session no
// longer waits and returns the NoticeResolved's cursor; "" when it was not
// pending or no session of ws runs.
func (b *Backend) Resolve(ws, id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.running[ws]
	if s == nil {
		return ""
	}
	i := slices.IndexFunc(s.notices.pending, func(n hub.Notification) bool { return n.ID == id })
	if i < 0 {
		return ""
	}
	n := s.notices.pending[i]
	s.notices.pending = slices.Delete(s.notices.pending, i, i+1)
	return b.appendNoticeLocked(s, hub.NotificationFrame{Type: hub.NoticeResolved,
		Notification: hub.Notification{ID: n.ID, ConversationID: n.ConversationID}})
}

// appendNoticeLocked logs fr under the next cursor and sends it to every
// open feed of s, in order. b.mu held.
func (b *Backend) appendNoticeLocked(s *workspaceSession, fr hub.NotificationFrame) string {
	fr.Cursor = s.notices.cursorOf(s.notices.head() + 1)
	s.notices.log = append(s.notices.log, fr)
	for _, f := range b.notify.opened[s.id] {
		if f.s == s {
			f.Send(fr)
		}
	}
	return fr.Cursor
}

// NoticeSnapshot is the snapshot of reason ("initial" or "gap") ws's
// running session would send now: what is pending, at its head. Without
// a running session it is the zero frame.
func (b *Backend) NoticeSnapshot(ws, reason string) hub.NotificationFrame {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.running[ws]
	if s == nil {
		return hub.NotificationFrame{}
	}
	return s.notices.snapshot(reason)
}

// ForgetNotices drops the log of ws's running session, as a real one does
// once its notices are older than it keeps: a feed opened later from a
// cursor before the head meets a gap. What is pending stays.
func (b *Backend) ForgetNotices(ws string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.running[ws]; s != nil {
		s.notices.first += len(s.notices.log)
		s.notices.log = nil
	}
}

// SetNotificationOpener makes every OpenNotifications of ws ask open
// first (see NotificationOpener); nil restores the unscripted answer.
func (b *Backend) SetNotificationOpener(ws string, open NotificationOpener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if open == nil {
		delete(b.notify.openers, ws)
		return
	}
	if b.notify.openers == nil {
		b.notify.openers = map[string]NotificationOpener{}
	}
	b.notify.openers[ws] = open
}

// FailNextNotifications makes the next OpenNotifications of ws fail with
// err, or with an Unavailable error when err is nil. Each call fails one
// more, in order.
func (b *Backend) FailNextNotifications(ws string, err error) {
	if err == nil {
		err = hub.Errorf(hub.Unavailable, "the session refused the notification feed")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notify.failNext == nil {
		b.notify.failNext = map[string][]error{}
	}
	b.notify.failNext[ws] = append(b.notify.failNext[ws], err)
}

// HoldNotifications makes every OpenNotifications of ws from now on wait
// until release is called, or until its ctx ends (it then fails
// Unavailable). Calling release again does nothing.
func (b *Backend) HoldNotifications(ws string) (release func()) {
	gate := make(chan struct{})
	b.mu.Lock()
	if b.notify.holds == nil {
		b.notify.holds = map[string]chan struct{}{}
	}
	b.notify.holds[ws] = gate
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.notify.holds[ws] == gate {
				delete(b.notify.holds, ws)
			}
			b.mu.Unlock()
			close(gate)
		})
	}
}

// NotificationOpens returns the cursor of every OpenNotifications of ws
// so far, failed ones included, in order.
func (b *Backend) NotificationOpens(ws string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.notify.opens[ws])
}

// WaitNotificationOpens waits until OpenNotifications of ws was called at
// least n times and returns the cursors it was called with, or ctx's
// error.
func (b *Backend) WaitNotificationOpens(ctx context.Context, ws string, n int) ([]string, error) {
	for {
		b.mu.Lock()
		opens, changed := slices.Clone(b.notify.opens[ws]), b.notifyChangedLocked()
		b.mu.Unlock()
		if len(opens) >= n {
			return opens, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitNotificationFeed waits until the n-th notification feed (from 1) of
// ws has opened and returns it, or returns ctx's error.
func (b *Backend) WaitNotificationFeed(ctx context.Context, ws string, n int) (*NotificationFeed, error) {
	for {
		b.mu.Lock()
		opened, changed := b.notify.opened[ws], b.notifyChangedLocked()
		b.mu.Unlock()
		if len(opened) >= n {
			return opened[n-1], nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// notifyChangedLocked is the channel closed at the next open or attempt.
// b.mu held.
func (b *Backend) notifyChangedLocked() <-chan struct{} {
	if b.notify.changed == nil {
		b.notify.changed = make(chan struct{})
	}
	return b.notify.changed
}

// notifyChangedFire wakes the waiters. b.mu held.
func (b *Backend) notifyChangedFire() {
	if b.notify.changed != nil {
		close(b.notify.changed)
	}
	b.notify.changed = make(chan struct{})
}

// OpenNotifications records the attempt, waits while ws's feeds are held,
// fails as scripted, then opens the feed (see the file's comment).
func (s *workspaceSession) OpenNotifications(ctx context.Context, cursor string) (hub.NotificationFeed, error) {
	b := s.b
	b.mu.Lock()
	if b.notify.opens == nil {
		b.notify.opens = map[string][]string{}
	}
	b.notify.opens[s.id] = append(b.notify.opens[s.id], cursor)
	b.notifyChangedFire()
	gate, open := b.notify.holds[s.id], b.notify.openers[s.id]
	var fail error
	if q := b.notify.failNext[s.id]; len(q) > 0 {
		fail, b.notify.failNext[s.id] = q[0], q[1:]
	}
	b.mu.Unlock()

	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, hub.Wrap(hub.Unavailable, ctx.Err(), "session did not answer")
	case fail != nil:
		return nil, fail
	}
	if open != nil {
		if err := open(ctx, cursor); err != nil {
			return nil, err
		}
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[s.id] != s { // ended: its feeds are ended under the same lock (end)
		return nil, hub.Errorf(hub.Unavailable, "session has ended")
	}
	f := &NotificationFeed{Cursor: cursor, s: s, frameQueue: newFrameQueue(s.notices.opening(cursor))}
	if b.notify.opened == nil {
		b.notify.opened = map[string][]*NotificationFeed{}
	}
	b.notify.opened[s.id] = append(b.notify.opened[s.id], f)
	b.notifyChangedFire()
	return f, nil
}

// endNotificationsOf ends every notification feed of the ended session s.
// b.mu held.
func (b *Backend) endNotificationsOf(s *workspaceSession) {
	for _, f := range b.notify.opened[s.id] {
		if f.s == s {
			f.End(hub.Errorf(hub.Unavailable, "session has ended"))
		}
	}
}
