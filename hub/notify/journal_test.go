package notify_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The journal's bounds (research §7.5): settled entries kept 24 h, at
// most 10,000 entries, the oldest settled evicted first, unsent never.

// entries makes n deliveries in state, created a second apart from at
// (settled at their creation when state is settled), oldest first.
func entries(prefix string, n int, state hub.PushDeliveryState, at time.Time) []hub.PushDelivery {
	out := make([]hub.PushDelivery, n)
	for i := range out {
		created := at.Add(time.Duration(i) * time.Second)
		d := hub.PushDelivery{Key: hub.PushDeliveryKey{WorkspaceID: "ws-a", DeviceID: "dev", NotificationID: fmt.Sprintf("%s%d", prefix, i)},
			State: state, CreatedAt: created, Deadline: created.Add(notify.SendWindow)}
		if state.Settled() {
			d.SettledAt = created
		}
		out[i] = d
	}
	return out
}

func keysOf(ds []hub.PushDelivery) []hub.PushDeliveryKey {
	var out []hub.PushDeliveryKey
	for _, d := range ds {
		out = append(out, d.Key)
	}
	return out
}

func TestTheJournalsBoundsAreResearchs(t *testing.T) {
	is := is.New(t)
	is.Equal(notify.MaxJournal, 10000)       // 10,000 entries
	is.Equal(notify.Retention, 24*time.Hour) // kept a day
	is.Equal(notify.MaxSends, 8)             // 8 sends at once
}

func TestPruneDropsSettledEntriesOlderThanADay(t *testing.T) {
	is := is.New(t)
	now := t0.Add(48 * time.Hour)
	old := entries("old", 2, hub.DeliverySent, now.Add(-notify.Retention-time.Second)) // settled 24 h +1 s and 24 h ago
	young := entries("young", 1, hub.DeliveryDiscarded, now.Add(-notify.Retention+time.Nanosecond))
	unsent := entries("unsent", 1, hub.DeliveryPending, t0) // two days old, never settled
	heldLong := entries("held", 1, hub.DeliveryHeld, t0)
	journal := append(append(append(append([]hub.PushDelivery{}, unsent...), old...), young...), heldLong...)
	drop, room := notify.Prune(journal, now, 1)
	is.Equal(drop, keysOf(old)) // exactly those settled a day ago or more
	is.True(room)               // and the new entry fits
}

func TestPruneEvictsTheOldestSettledEntriesOnlyWhenTheJournalWouldOverflow(t *testing.T) {
	now := t0.Add(time.Hour)
	full := entries("s", notify.MaxJournal, hub.DeliverySent, t0)
	almost := entries("s", notify.MaxJournal-1, hub.DeliverySent, t0)
	pendingFirst := append(entries("p", 2, hub.DeliveryPending, t0.Add(-time.Minute)), entries("s", notify.MaxJournal-2, hub.DeliveryDiscarded, t0)...)
	oneExpired := append(entries("x", 1, hub.DeliverySent, t0.Add(-notify.Retention)), entries("s", notify.MaxJournal-1, hub.DeliverySent, t0)...)
	for _, tc := range []struct {
		name    string
		journal []hub.PushDelivery
		adding  int
		drop    []hub.PushDeliveryKey
		room    bool
	}{
		{"a journal with room evicts nothing", almost, 1, nil, true},
		{"a journal with room for none more adds none", full, 0, nil, true},
		{"a full journal evicts its oldest settled entry for one more", full, 1, keysOf(full[:1]), true},
		{"a full journal evicts its three oldest for three more", full, 3, keysOf(full[:3]), true},
		{"an unsent entry is skipped, the oldest settled evicted", pendingFirst, 2, keysOf(pendingFirst[2:4]), true},
		{"an expired entry makes the room, nothing else goes", oneExpired, 1, keysOf(oneExpired[:1]), true},
		{"an expired entry is dropped once while eviction goes on", oneExpired, 2, keysOf(oneExpired[:2]), true},
		{"more than the journal holds never fits", nil, notify.MaxJournal + 1, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			drop, room := notify.Prune(tc.journal, now, tc.adding)
			is.Equal(len(drop), len(tc.drop)) // as many dropped
			for i := range drop {
				is.Equal(drop[i], tc.drop[i]) // the oldest, in order
			}
			is.Equal(room, tc.room) // whether the new entries fit
		})
	}
}

func TestUnsentEntriesAreNeverEvictedAndRefuseNewOnesWhenTheyFillTheJournal(t *testing.T) {
	is := is.New(t)
	now := t0.Add(time.Hour)
	unsent := append(entries("p", notify.MaxJournal/2, hub.DeliveryPending, t0), entries("h", notify.MaxJournal/2, hub.DeliveryHeld, t0)...)
	drop, room := notify.Prune(unsent, now, 1)
	is.Equal(len(drop), 0) // none evicted
	is.True(!room)         // and no room

	mixed := append(entries("p", notify.MaxJournal-1, hub.DeliveryPending, t0), entries("s", 1, hub.DeliverySent, t0.Add(time.Minute))...)
	drop, room = notify.Prune(mixed, now, 2)
	is.Equal(drop, keysOf(mixed[notify.MaxJournal-1:])) // the one settled entry goes
	is.True(!room)                                      // yet two more do not fit beside 9,999 unsent
	drop, room = notify.Prune(mixed, now, 1)
	is.Equal(drop, keysOf(mixed[notify.MaxJournal-1:])) // the settled entry goes
	is.True(room)                                       // and one more fits
}
