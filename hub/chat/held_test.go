package chat_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// crash stops the child as a crash would: what the store holds now is
// all the next child gets (the old one is closed over a store nobody
// reads any more), and the agent goes with it.
func (r *rig) crash() {
	r.t.Helper()
	recs, err := r.store.LoadConversations()
	if err != nil {
		r.t.Fatalf("load: %v", err)
	}
	kept := &fakes.ConversationStore{}
	if err := kept.SaveConversations(recs); err != nil {
		r.t.Fatalf("save: %v", err)
	}
	r.store = kept
	r.m.Close()
	r.m = r.manager()
}

// Held messages survive a crash of the child and are then delivered in
// order, each once; the message whose turn the crash interrupted is not
// sent again, and a notice says its turn was interrupted; a send retried
// across the crash is answered, not delivered again.
func TestHeldMessagesSurviveACrashAndAreDeliveredOnce(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	r.send(id, "first")
	r.turn() // runs when the child crashes
	second, err := r.m.Send(context.Background(), id, chat.Message{Text: "second", Attachments: []chat.Attachment{{Name: "shot.png", Data: png}}})
	is.NoErr(err)
	is.True(second.Held)
	third, err := r.m.Send(context.Background(), id, chat.Message{Text: "third", RequestID: "req-3"})
	is.NoErr(err)

	r.crash()
	s, err := r.m.Snapshot(id)
	is.NoErr(err)
	is.Equal(len(s.Queued), 2)                 // both still held
	is.Equal(s.Queued[0].ID, second.MessageID) // under their ids
	is.Equal(s.Queued[0].Attachments[0].Name, "shot.png")
	turn := r.turn()
	is.Equal(turn.Prompt.Text, "second")                  // the first held goes out: "first" is not sent again
	is.True(bytes.Equal(turn.Prompt.Images[0].Data, png)) // with its image
	rd := r.follow(id)
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	turn = r.turn()
	is.Equal(turn.Prompt.Text, "third") // then the next, in order
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.until("the queue empty", func(ev event) bool { return ev.Type == chat.EventQueue && len(ev.Queued) == 0 })

	again, err := r.m.Send(context.Background(), id, chat.Message{Text: "third", RequestID: "req-3"})
	is.NoErr(err)                              // the retried send
	is.Equal(again.MessageID, third.MessageID) // is answered with the first result
	r.send(id, "fourth")
	is.Equal(r.turn().Prompt.Text, "fourth") // and delivered nothing: the next prompt is the next message

	s, err = r.m.Snapshot(id)
	is.NoErr(err)
	ns := noticeSaying(items(t, s), "stopped during the turn")
	is.Equal(len(ns), 1)                                            // the interrupted turn is told, once
	is.True(strings.Contains(ns[0]["message"].(string), `"first"`)) // naming its message
}

// A client told "held" counts on it: the message is saved before the
// send is answered, and a send whose message cannot be saved is refused
// and not held.
func TestAHeldMessageIsSavedBeforeItsSendIsAnswered(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	r.send(id, "first")
	turn := r.turn()
	defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.send(id, "second")
	recs, err := r.store.LoadConversations()
	is.NoErr(err)
	is.Equal(len(recs[0].Held), 1)             // saved when the send answers
	is.Equal(recs[0].Held[0].Text, "second")   // whole
	is.Equal(recs[0].Delivering.Text, "first") // beside the message whose turn runs

	r.store.Fail(errors.New("disk full"))
	_, err = r.m.Send(context.Background(), id, chat.Message{Text: "third", RequestID: "req-3"})
	isKind(is, err, hub.Internal) // not saved: refused
	s, _ := r.m.Snapshot(id)
	is.Equal(len(s.Queued), 1) // and not held
	r.store.Fail(nil)
	res, err := r.m.Send(context.Background(), id, chat.Message{Text: "third", RequestID: "req-3"})
	is.NoErr(err)     // the retry is a new send
	is.True(res.Held) // held now

	// A removal is saved before it answers too.
	_, err = r.m.RemoveHeld(id, res.MessageID)
	is.NoErr(err)
	recs, err = r.store.LoadConversations()
	is.NoErr(err)
	is.Equal(len(recs[0].Held), 1) // gone from the store
	r.store.Fail(errors.New("disk full"))
	s, _ = r.m.Snapshot(id)
	_, err = r.m.RemoveHeld(id, s.Queued[0].ID)
	isKind(is, err, hub.Internal) // a removal not saved is said
	r.store.Fail(nil)
	_, err = r.m.Rename(id, "saved at last")
	is.NoErr(err)
	recs, err = r.store.LoadConversations()
	is.NoErr(err)
	is.Equal(len(recs[0].Held), 0) // and goes out with the next save
}

// A message's delivery is saved before the agent has it: when that save
// fails the message is not sent (a crash could otherwise send it twice),
// and the turn fails saying so.
func TestADeliveryIsSavedBeforeTheAgentHasIt(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.store.Fail(errors.New("disk full"))
	r.send(id, "unsaved")
	rd.status(chat.StatusFailed)
	s, _ := r.m.Snapshot(id)
	is.Equal(len(noticeSaying(items(t, s), "could not be recorded as delivered, so it was not sent")), 1) // said
	r.store.Fail(nil)
	r.send(id, "saved")
	is.Equal(r.turn().Prompt.Text, "saved") // the agent never had the first
}
