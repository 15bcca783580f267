package porttest

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// ConversationStore runs the hub.ConversationStore contract. open returns
// a store over the same place each time it is called within a subtest,
// as a restarted child opens it: what one saved, the next loads.
func ConversationStore(t *testing.T, open func(t *testing.T) func() hub.ConversationStore) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	one := hub.ConversationRecord{ID: "a:1", AgentID: "a", SessionID: "1", Title: "one",
		CreatedAt: at, UpdatedAt: at.Add(time.Minute), Model: "fast", Mode: "ask"}
	two := hub.ConversationRecord{ID: "b:2", AgentID: "b", SessionID: "2", Title: "two", CreatedAt: at, UpdatedAt: at}

	t.Run("EmptyAtFirst", func(t *testing.T) {
		is := is.New(t)
		got, err := open(t)().LoadConversations()
		is.NoErr(err)         // nothing stored yet is no error
		is.Equal(len(got), 0) // and no conversation
	})

	t.Run("SaveThenLoad", func(t *testing.T) {
		is := is.New(t)
		reopen := open(t)
		is.NoErr(reopen().SaveConversations([]hub.ConversationRecord{one, two}))
		got, err := reopen().LoadConversations()
		is.NoErr(err)                                  // read back
		is.Equal(len(got), 2)                          // every record
		is.Equal(got[0].ID, one.ID)                    // in order
		is.Equal(got[0].Title, one.Title)              // whole
		is.Equal(got[0].Model, one.Model)              // with its configuration
		is.Equal(got[0].Mode, one.Mode)                //
		is.True(got[0].UpdatedAt.Equal(one.UpdatedAt)) // and its times
		is.Equal(got[1].SessionID, two.SessionID)
	})

	t.Run("SaveReplaces", func(t *testing.T) {
		is := is.New(t)
		reopen := open(t)
		is.NoErr(reopen().SaveConversations([]hub.ConversationRecord{one, two}))
		is.NoErr(reopen().SaveConversations([]hub.ConversationRecord{two}))
		got, err := reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got), 1)       // the last save is the inventory
		is.Equal(got[0].ID, two.ID) // whole
		is.NoErr(reopen().SaveConversations(nil))
		got, err = reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got), 0) // an empty save empties it
	})
}
