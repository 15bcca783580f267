package notify

import (
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Bounds of the delivery journal: settled entries are kept only to
// refuse the same occurrence twice, for a day at most, and the journal
// never grows past MaxJournal.
const (
	MaxJournal = 10000
	Retention  = 24 * time.Hour
	// MaxSends bounds the sends in flight at once.
	MaxSends = 8
)

// Prune returns the keys to delete from journal (oldest CreatedAt first)
// at now so that it keeps room for adding more new entries: settled
// entries older than Retention, then the oldest settled ones while it
// would exceed MaxJournal. room reports whether the new entries fit
// (unsent entries are never evicted: when they alone fill the journal,
// new occurrences are refused).
func Prune(journal []hub.PushDelivery, now time.Time, adding int) (drop []hub.PushDeliveryKey, room bool) {
	keep := len(journal)
	for _, d := range journal {
		if d.State.Settled() && !now.Before(d.SettledAt.Add(Retention)) {
			drop = append(drop, d.Key)
			keep--
		}
	}
	for _, d := range journal {
		if keep+adding <= MaxJournal {
			break
		}
		if d.State.Settled() && now.Before(d.SettledAt.Add(Retention)) {
			drop = append(drop, d.Key)
			keep--
		}
	}
	return drop, keep+adding <= MaxJournal
}
