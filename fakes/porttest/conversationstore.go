package porttest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/chat"
)

// ConversationStore runs the chat.ConversationStore contract. open returns
// a store over the same place each time it is called within a subtest,
// as a restarted child opens it: what one saved, the next loads.
func ConversationStore(t *testing.T, open func(t *testing.T) func() chat.ConversationStore) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	one := chat.ConversationRecord{ID: "a:1", AgentID: "a", SessionID: "1", Title: "one",
		CreatedAt: at, UpdatedAt: at.Add(time.Minute), Model: "fast", Mode: "ask"}
	two := chat.ConversationRecord{ID: "b:2", AgentID: "b", SessionID: "2", Title: "two", CreatedAt: at, UpdatedAt: at}

	t.Run("EmptyAtFirst", func(t *testing.T) {
		is := is.New(t)
		got, err := open(t)().LoadConversations()
		is.NoErr(err)         // nothing stored yet is no error
		is.Equal(len(got), 0) // and no conversation
	})

	t.Run("SaveThenLoad", func(t *testing.T) {
		is := is.New(t)
		reopen := open(t)
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{one, two}))
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
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{one, two}))
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{two}))
		got, err := reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got), 1)       // the last save is the inventory
		is.Equal(got[0].ID, two.ID) // whole
		is.NoErr(reopen().SaveConversations(nil))
		got, err = reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got), 0) // an empty save empties it
	})

	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 3000)...)
	jpeg := append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte{9}, 5000)...)
	keyA, keyB := strings.Repeat("a", 32), strings.Repeat("b", 32)
	held := one
	held.Held = []chat.HeldMessageRecord{
		{ID: "message:1", Text: "look", QueuedAt: at, RequestID: "req-1", Images: []chat.HeldImage{
			{Key: keyA, MimeType: "image/png", Name: "shot.png", Data: png}, {Key: keyB, MimeType: "image/jpeg", Data: jpeg}}},
		{ID: "message:2", Text: "then this", QueuedAt: at.Add(time.Second)},
	}
	held.Delivering = &chat.HeldMessageRecord{ID: "message:0", Text: "first", QueuedAt: at}
	held.Sent = []chat.SentRecord{{RequestID: "req-1", MessageID: "message:1", Held: true}}

	t.Run("HeldMessagesAreKept", func(t *testing.T) {
		is := is.New(t)
		reopen := open(t)
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{held, two}))
		got, err := reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got), 2)
		h := got[0].Held
		is.Equal(len(h), 2)                             // every held message
		is.Equal(h[0].ID, "message:1")                  // in order
		is.Equal(h[0].Text, "look")                     // whole
		is.Equal(h[0].RequestID, "req-1")               //
		is.True(h[0].QueuedAt.Equal(at))                //
		is.Equal(len(h[0].Images), 2)                   // with its images
		is.Equal(h[0].Images[0].Key, keyA)              //
		is.Equal(h[0].Images[0].MimeType, "image/png")  //
		is.Equal(h[0].Images[0].Name, "shot.png")       //
		is.True(bytes.Equal(h[0].Images[0].Data, png))  // and their bytes
		is.True(bytes.Equal(h[0].Images[1].Data, jpeg)) //
		is.Equal(h[1].Text, "then this")                //
		is.Equal(len(h[1].Images), 0)                   //
		is.Equal(got[0].Delivering.Text, "first")       // the message being delivered
		is.Equal(got[0].Sent, held.Sent)                // the sends remembered
		is.Equal(len(got[1].Held), 0)                   // another conversation holds none
	})

	t.Run("HeldImagesFollowTheInventory", func(t *testing.T) {
		is := is.New(t)
		reopen := open(t)
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{held}))
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{held})) // the same images again
		delivered := held
		delivered.Held = held.Held[1:]
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{delivered})) // their message delivered
		again := held
		again.Held = []chat.HeldMessageRecord{{ID: "message:3", Text: "again", QueuedAt: at, Images: []chat.HeldImage{
			{Key: keyB, MimeType: "image/jpeg", Data: jpeg}}}}
		is.NoErr(reopen().SaveConversations([]chat.ConversationRecord{again})) // an image held anew
		got, err := reopen().LoadConversations()
		is.NoErr(err)
		is.Equal(len(got[0].Held), 1)
		is.True(bytes.Equal(got[0].Held[0].Images[0].Data, jpeg)) // read back whole
	})
}
