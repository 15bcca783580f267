package chat

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// A snapshot is one frame, which the Hub bounds: however many requests
// wait, it lists the newest within MaxNoticeSnapshotBytes, oldest first.
func TestASnapshotListsTheNewestPendingWithinItsBound(t *testing.T) {
	is := is.New(t)
	l := newNoticeLog("e")
	const size = 1000
	count := MaxNoticeSnapshotBytes/size + 50
	now := time.Unix(0, 0)
	for i := range count {
		id := strconv.Itoa(i)
		seq := l.append(hub.NotificationFrame{Type: hub.NoticeEvent, Notification: hub.Notification{ID: id}}, size, now)
		l.pending[id] = pendingNotice{n: hub.Notification{ID: id}, seq: seq, size: size}
	}
	fr := l.snapshot(NoticeGap)
	kept := MaxNoticeSnapshotBytes / size
	is.Equal(len(fr.Pending), kept)                        // as many as fit
	is.Equal(fr.Pending[0].ID, strconv.Itoa(count-kept))   // the newest
	is.Equal(fr.Pending[kept-1].ID, strconv.Itoa(count-1)) // up to the last, in order
	is.Equal(fr.Cursor, "e:"+strconv.Itoa(count))          // at the head
	is.True(l.bytes <= NoticeLogBytes)                     // while the log keeps its own bound
}

// encodedLen bounds what JSON makes of a string, whatever it holds.
func TestEncodedLenBoundsTheJSONOfAString(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<a&b>", "\x00\x1f\t\n", "\u2028\u2029", "é€𝄞", "\xff\xfe"} {
		is := is.New(t)
		b, err := json.Marshal(s)
		is.NoErr(err)
		is.True(len(b) <= encodedLen(s)) // never more than the bound
	}
}
