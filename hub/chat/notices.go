package chat

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// The session's notification feed (hub.NotificationFrame): the Manager
// announces every occurrence a person may want a phone to tell of, and
// the Hub follows them through the child to send Web Push messages.
//
//   - permission-pending and question-pending when a request of an agent
//     starts waiting for the user (one announced per request, however it
//     was refused or retried before); resolved once it no longer waits:
//     answered, withdrawn or settled by the agent, settled when its turn
//     ended or was cancelled, when its agent exited, or when its
//     conversation was closed. A request past MaxPendingRequests, which
//     nobody sees, is never announced.
//   - turn-completed when a turn ends with status completed (end_turn, or
//     a limit of the agent's: it stopped and waits for the user) and its
//     conversation is still open. A failure, a refusal, a cancel or an
//     agent's exit announce nothing, nor does the history an agent
//     replays when a session is reopened: it never runs a turn here. ACP
//     has no turns but those the core delivers (a subagent works inside
//     its parent's turn, as tool calls), so every turn is top-level.
//
// Each occurrence has an identity (NotificationID) that is the same every
// time it is told and unique to it: a request's id is 128 random bits
// (requests.go), and so is a turn's, never a count that starts again with
// the child. A notice whose identity would be longer than
// MaxNotificationIDBytes (an agent's session id of hundreds of bytes), or
// is not valid UTF-8, is not announced: the Hub could not store it.
//
// The feed's log is the notices in order, each under a cursor
// "<epoch>:<sequence>": the epoch is random per Manager, so a cursor of an
// earlier child is never taken for one of this. The log keeps the newest
// notices within NoticeLogBytes and NoticeLogAge (by the Manager's Clock);
// a reader resumes after any cursor still in it, and one it cannot resume
// (older, another epoch, ahead of the head, malformed) gets a snapshot of
// what is pending instead. A reader at the head resumes however long the
// feed stayed quiet.

// The bounds of the notification feed.
const (
	// NoticeLogBytes bounds the notices kept for readers that resume, as
	// encoded (512 KiB: a thousand or more occurrences).
	NoticeLogBytes = 512 << 10
	// NoticeLogAge bounds how long a notice is kept for them: a Hub that
	// was away longer gets a snapshot.
	NoticeLogAge = 5 * time.Minute
	// MaxNotificationIDBytes bounds an occurrence's identity
	// (hub.Notification.ID).
	MaxNotificationIDBytes = 512
	// MaxNoticeSnapshotBytes bounds the pending notices one snapshot
	// lists, as encoded: the newest are kept. Requests awaiting an answer
	// are bounded per conversation only (MaxPendingRequests), and a
	// snapshot is one frame, which a reader bounds (2 MiB at the Hub).
	MaxNoticeSnapshotBytes = 1 << 20
)

// The reasons of a snapshot (hub.NotificationFrame.Reason).
const (
	NoticeInitial = "initial" // the reader gave no cursor
	NoticeGap     = "gap"     // the reader's cursor cannot be resumed
)

// noticeOverhead is what a notice's frame holds besides its strings: the
// field names, its type and cursor, the time.
const noticeOverhead = 160

// NotificationID is the identity of the occurrence of kind with sourceID
// (a request's or a turn's id) in the conversation conversationID of the
// agent agentID: the JSON array of the four strings. ok is false when it
// would be longer than MaxNotificationIDBytes, or a string is not valid
// UTF-8 (JSON would change it, and the identity with it).
func NotificationID(agentID, conversationID string, kind hub.NotificationKind, sourceID string) (id string, ok bool) {
	parts := []string{agentID, conversationID, string(kind), sourceID}
	for _, p := range parts {
		if !utf8.ValidString(p) {
			return "", false
		}
	}
	b, err := json.Marshal(parts)
	if err != nil || len(b) > MaxNotificationIDBytes {
		return "", false
	}
	return string(b), true
}

// NoticeBatch is what a reader of the notification feed gets next
// (Notices).
type NoticeBatch struct {
	// Frames are a snapshot (NoticeSnapshot), or the notices after the
	// cursor (NoticeEvent and NoticeResolved), in order; each carries its
	// cursor.
	Frames []hub.NotificationFrame
	// Cursor is the head: where the reader is once it has Frames, and
	// where it asks from next.
	Cursor string
	// Wait is closed once more may follow.
	Wait <-chan struct{}
	// Ended reports the Manager closed: the reader ends after Frames.
	Ended bool
}

// Notices returns what follows cursor on the notification feed: the
// notices after it, or, for a cursor that cannot be resumed, a snapshot
// of the occurrences still pending (Reason NoticeGap; NoticeInitial when
// cursor is ""). It never starts an agent.
func (m *Manager) Notices(cursor string) NoticeBatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.notices
	l.trim(m.now())
	b := NoticeBatch{Cursor: l.cursorOf(l.head), Wait: l.changed.wait(), Ended: m.closed}
	if cursor == "" {
		b.Frames = []hub.NotificationFrame{l.snapshot(NoticeInitial)}
		return b
	}
	frames, ok := l.after(cursor)
	if !ok {
		frames = []hub.NotificationFrame{l.snapshot(NoticeGap)}
	}
	b.Frames = frames
	return b
}

// announce tells of the occurrence of kind with sourceID in c; a pending
// kind stays in snapshots until resolveNotice. It returns the occurrence's
// identity, "" when it has none that fits (and is not announced). m.mu
// held.
func (m *Manager) announce(c *conversation, kind hub.NotificationKind, sourceID string) string {
	id, ok := NotificationID(c.agentID, c.id, kind, sourceID)
	if !ok {
		m.log.Warn("an occurrence was not announced: its identity would be too long", "kind", kind)
		return ""
	}
	now := m.now()
	n := hub.Notification{ID: id, ConversationID: c.id, SourceID: sourceID, Kind: kind,
		CreatedAt: time.UnixMilli(now.UnixMilli()).UTC()}
	size := noticeOverhead + encodedLen(n.ID) + encodedLen(n.ConversationID) + encodedLen(n.SourceID) + len(n.Kind)
	l := m.notices
	seq := l.append(hub.NotificationFrame{Type: hub.NoticeEvent, Notification: n}, size, now)
	if kind.Category() == hub.CategoryNeedsAnswer {
		l.pending[id] = pendingNotice{n: n, seq: seq, size: size}
	}
	return id
}

// resolveNotice tells that the pending occurrence id no longer waits;
// one not pending is no change. m.mu held.
func (m *Manager) resolveNotice(id string) {
	l := m.notices
	p, ok := l.pending[id]
	if !ok {
		return
	}
	delete(l.pending, id)
	size := noticeOverhead + encodedLen(id) + encodedLen(p.n.ConversationID)
	l.append(hub.NotificationFrame{Type: hub.NoticeResolved,
		Notification: hub.Notification{ID: id, ConversationID: p.n.ConversationID}}, size, m.now())
}

// noticeKind is the kind announced for a request item of kind.
func noticeKind(itemKind string) hub.NotificationKind {
	if itemKind == KindQuestion {
		return hub.NotifyQuestionPending
	}
	return hub.NotifyPermissionPending
}

// encodedLen bounds the length of s as a JSON string: every character
// JSON may escape counted at its longest escape (\u00XX, \u2028, and
// \ufffd for a byte that is not UTF-8).
func encodedLen(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < 0x20 || r == '"' || r == '\\' || r == '<' || r == '>' || r == '&', r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029':
			n += 3
		}
		i += size
	}
	return n
}

// noticeLog is the notification feed's log and the occurrences pending.
// Guarded by Manager.mu.
type noticeLog struct {
	epoch   string
	head    uint64        // the last notice's sequence; 0 before the first
	first   uint64        // the sequence of entries[0]; head+1 when empty
	entries []noticeEntry // oldest first
	bytes   int           // the entries' sizes together
	pending map[string]pendingNotice
	changed notifier
}

// noticeEntry is one notice of the log.
type noticeEntry struct {
	frame hub.NotificationFrame
	at    time.Time
	size  int
}

// pendingNotice is an occurrence still waiting, and the sequence it was
// announced at (snapshots list them in that order).
type pendingNotice struct {
	n    hub.Notification
	seq  uint64
	size int
}

func newNoticeLog(epoch string) *noticeLog {
	return &noticeLog{epoch: epoch, first: 1, pending: map[string]pendingNotice{}}
}

// cursorOf is the cursor after the notice with sequence seq.
func (l *noticeLog) cursorOf(seq uint64) string { return l.epoch + ":" + strconv.FormatUint(seq, 10) }

// append logs fr under the next sequence, keeps the log within its
// bounds at now, wakes the readers, and returns the sequence.
func (l *noticeLog) append(fr hub.NotificationFrame, size int, now time.Time) uint64 {
	l.head++
	fr.Cursor = l.cursorOf(l.head)
	l.entries = append(l.entries, noticeEntry{frame: fr, at: now, size: size})
	l.bytes += size
	l.trim(now)
	l.changed.fire()
	return l.head
}

// trim drops the oldest notices past NoticeLogBytes or NoticeLogAge.
func (l *noticeLog) trim(now time.Time) {
	drop := 0
	for drop < len(l.entries) && (l.bytes > NoticeLogBytes || now.Sub(l.entries[drop].at) > NoticeLogAge) {
		l.bytes -= l.entries[drop].size
		drop++
	}
	if drop == 0 {
		return
	}
	clear(l.entries[:drop]) // the array outlives them until append moves it
	l.entries = l.entries[drop:]
	l.first += uint64(drop)
}

// after returns the notices after cursor; ok is false when the log cannot
// resume it: malformed, of another epoch, ahead of the head, or older
// than the oldest notice kept.
func (l *noticeLog) after(cursor string) (_ []hub.NotificationFrame, ok bool) {
	epoch, text, found := strings.Cut(cursor, ":")
	seq, err := strconv.ParseUint(text, 10, 64)
	switch {
	case !found || epoch != l.epoch || err != nil || strconv.FormatUint(seq, 10) != text:
		return nil, false
	case seq > l.head || seq+1 < l.first:
		return nil, false
	}
	frames := make([]hub.NotificationFrame, 0, l.head-seq)
	for _, e := range l.entries[seq+1-l.first:] {
		frames = append(frames, e.frame)
	}
	return frames, true
}

// snapshot lists the occurrences pending, in the order they were
// announced: the newest within MaxNoticeSnapshotBytes.
func (l *noticeLog) snapshot(reason string) hub.NotificationFrame {
	ps := make([]pendingNotice, 0, len(l.pending))
	for _, p := range l.pending {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b pendingNotice) int { return cmp.Compare(a.seq, b.seq) })
	start, total := len(ps), 0
	for start > 0 && total+ps[start-1].size <= MaxNoticeSnapshotBytes {
		start--
		total += ps[start].size
	}
	pending := make([]hub.Notification, 0, len(ps)-start)
	for _, p := range ps[start:] {
		pending = append(pending, p.n)
	}
	return hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: l.cursorOf(l.head), Reason: reason, Pending: pending}
}
