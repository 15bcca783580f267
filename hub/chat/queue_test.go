package chat_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// Images of each allowed type, by their magic numbers.
var (
	png  = []byte("\x89PNG\r\n\x1a\n rest of a png")
	jpeg = []byte("\xff\xd8\xff\xe0 rest of a jpeg")
	gif  = []byte("GIF89a rest of a gif")
	webp = []byte("RIFF\x00\x00\x00\x00WEBPVP8 rest")
)

func TestHeldQueue(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "first")
	first := r.turn()

	// While a turn runs, messages are held: 20 of them.
	var held []string
	for i := range chat.MaxHeldMessages {
		res := r.send(id, "held "+strconv.Itoa(i))
		is.True(res.Held)              // held behind the turn
		is.Equal(len(res.Queued), i+1) // the queue restated
		held = append(held, res.MessageID)
	}
	_, err := r.m.Send(context.Background(), id, chat.Message{Text: "one too many"})
	isKind(is, err, hub.RateLimited) // a 21st held message is refused with 429

	// Removing one makes room; the removal is restated.
	q, err := r.m.RemoveHeld(id, held[0])
	is.NoErr(err)                            // removed
	is.Equal(len(q), chat.MaxHeldMessages-1) // one fewer
	_, err = r.m.RemoveHeld(id, held[0])
	isKind(is, err, hub.NotFound) // a message no longer held is unknown
	ev := rd.until("the removal", func(ev event) bool {
		return ev.Type == chat.EventQueue && ev.Change["kind"] == "removed"
	})
	is.Equal(ev.Change["messageId"], held[0]) // naming the message

	// The turn ends: held messages are delivered one turn each, in order.
	first.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	for i := 1; i < len(held); i++ {
		turn := r.turn()
		is.Equal(turn.Prompt.Text, "held "+strconv.Itoa(i)) // in the order they were sent
		turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	}
	rd.until("the last delivery", func(ev event) bool {
		return ev.Type == chat.EventQueue && ev.Change["kind"] == "delivered" && len(ev.Queued) == 0
	})
	s, err := r.m.Snapshot(id)
	is.NoErr(err)
	users := ofKind(items(t, s), chat.KindUserMessage)
	is.Equal(len(users), chat.MaxHeldMessages) // every delivered message once: the first and 19 held
	is.Equal(len(s.Queued), 0)                 // nothing held any more
}

func TestHeldTextBound(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	r.send(id, "first")
	turn := r.turn()
	defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	big := strings.Repeat("a", chat.MaxHeldTextBytes/2)
	r.send(id, big)
	r.send(id, big) // exactly 256 KiB held
	_, err := r.m.Send(context.Background(), id, chat.Message{Text: "a"})
	isKind(is, err, hub.RateLimited) // one byte more is refused with 429
	_, err = r.m.Send(context.Background(), id, chat.Message{Text: strings.Repeat("a", 257<<10)})
	isKind(is, err, hub.RateLimited) // 257 KiB at once too
}

// Held images are bounded too (Wharf's own bound, 64 MiB): a message
// whose images would pass it waits with 429, and a removal makes room.
func TestHeldImageBound(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	r.send(id, "first")
	turn := r.turn()
	defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, chat.MaxAttachmentBytes-8)...) // 10 MiB
	eight := make([]chat.Attachment, chat.MaxAttachments)
	for i := range eight {
		eight[i] = chat.Attachment{Name: "shot.png", Data: png}
	}
	held, err := r.m.Send(context.Background(), id, chat.Message{Attachments: eight[:6]}) // 60 MiB held
	is.NoErr(err)
	_, err = r.m.Send(context.Background(), id, chat.Message{Attachments: eight[:1]})
	isKind(is, err, hub.RateLimited) // 10 MiB more would pass 64 MiB
	_, err = r.m.RemoveHeld(id, held.MessageID)
	is.NoErr(err) // the big one is taken back
	_, err = r.m.Send(context.Background(), id, chat.Message{Attachments: eight[:1]})
	is.NoErr(err) // and there is room again
}

// The held messages of all conversations together are bounded (128 MiB):
// past it a message waits with 429, whichever conversation it is for.
func TestHeldMessagesAreBoundedPerWorkspace(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, chat.MaxAttachmentBytes-8)...) // 10 MiB, shared
	images := func(n int) []chat.Attachment {
		out := make([]chat.Attachment, n)
		for i := range out {
			out[i] = chat.Attachment{Data: png}
		}
		return out
	}
	var ids []string
	for range 3 {
		id := r.create()
		r.send(id, "first")
		turn := r.turn()
		defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
		ids = append(ids, id)
	}
	a, err := r.m.Send(context.Background(), ids[0], chat.Message{Attachments: images(6)})
	is.NoErr(err) // 60 MiB held in one conversation
	_, err = r.m.Send(context.Background(), ids[1], chat.Message{Attachments: images(6)})
	is.NoErr(err) // and 60 MiB in another
	_, err = r.m.Send(context.Background(), ids[2], chat.Message{Attachments: images(1)})
	isKind(is, err, hub.RateLimited)                                           // 10 MiB more passes the workspace's 128 MiB
	is.True(strings.Contains(hub.MessageOf(err), "workspace's held messages")) // saying so
	_, err = r.m.RemoveHeld(ids[0], a.MessageID)
	is.NoErr(err)
	_, err = r.m.Send(context.Background(), ids[2], chat.Message{Attachments: images(1)})
	is.NoErr(err) // a removal makes room
	is.NoErr(r.m.CloseConversation(ids[1]))
	_, err = r.m.Send(context.Background(), ids[2], chat.Message{Attachments: images(5)})
	is.NoErr(err) // and so does closing a conversation
}

func TestSendIsIdempotentByRequestID(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	a, err := r.m.Send(context.Background(), id, chat.Message{Text: "once", RequestID: "req-1"})
	is.NoErr(err)
	b, err := r.m.Send(context.Background(), id, chat.Message{Text: "once", RequestID: "req-1"})
	is.NoErr(err)                      // the retry answers
	is.Equal(a.MessageID, b.MessageID) // with the first result
	r.turn().End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd := r.follow(id)
	rd.drain()
	s, _ := r.m.Snapshot(id)
	is.Equal(len(ofKind(items(t, s), chat.KindUserMessage)), 1) // delivered once
}

func TestAttachmentRules(t *testing.T) {
	big := append(bytes.Clone(png), make([]byte, 11<<20)...)
	edge := append(bytes.Clone(png), make([]byte, chat.MaxAttachmentBytes-len(png))...)
	nine := make([]chat.Attachment, 9)
	for i := range nine {
		nine[i] = chat.Attachment{Data: png}
	}
	for _, tc := range []struct {
		name string
		msg  chat.Message
		kind hub.Kind // Internal: accepted
	}{
		{"png", chat.Message{Text: "look", Attachments: []chat.Attachment{{Data: png}}}, hub.Internal},
		{"jpeg gif webp", chat.Message{Attachments: []chat.Attachment{{Data: jpeg}, {Data: gif}, {Data: webp}}}, hub.Internal},
		{"eight images", chat.Message{Attachments: nine[:8]}, hub.Internal},
		{"exactly 10 MiB", chat.Message{Attachments: []chat.Attachment{{Data: edge}}}, hub.Internal},
		{"a 9th image", chat.Message{Attachments: nine}, hub.Invalid},
		{"an 11 MiB image", chat.Message{Attachments: []chat.Attachment{{Data: big}}}, hub.TooLarge},
		{"not an image", chat.Message{Attachments: []chat.Attachment{{MimeType: "image/png", Data: []byte("%PDF-1.7")}}}, hub.Invalid},
		{"1 MiB of text", chat.Message{Text: strings.Repeat("a", chat.MaxMessageTextBytes)}, hub.Internal},
		{"text over 1 MiB", chat.Message{Text: strings.Repeat("a", chat.MaxMessageTextBytes+1)}, hub.TooLarge},
		{"empty", chat.Message{Text: "  \n"}, hub.Invalid},
		{"not UTF-8", chat.Message{Text: "\xff"}, hub.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			id := r.create()
			_, err := r.m.Send(context.Background(), id, tc.msg)
			if tc.kind == hub.Internal {
				is.NoErr(err) // accepted
				turn := r.turn()
				is.Equal(len(turn.Prompt.Images), len(tc.msg.Attachments)) // the images reach the agent
				turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
				return
			}
			isKind(is, err, tc.kind) // refused with its status
			s, err := r.m.Snapshot(id)
			is.NoErr(err)             // the conversation stays usable
			is.Equal(len(s.Items), 0) // and nothing was delivered
		})
	}
}

func TestRename(t *testing.T) {
	for _, tc := range []struct {
		name, title, want string
		ok                bool
	}{
		{"trimmed", "  Fix the build \n", "Fix the build", true},
		{"200 bytes", strings.Repeat("a", 200), strings.Repeat("a", 200), true},
		{"200 bytes of two-byte letters", strings.Repeat("é", 100), strings.Repeat("é", 100), true},
		{"201 bytes", strings.Repeat("a", 201), "", false},
		{"201 bytes once a letter is two", strings.Repeat("a", 199) + "é", "", false},
		{"blank", " \t ", "", false},
		{"empty", "", "", false},
		{"a bidi override", "invoice\u202Egnp.exe", "", false},
		{"a bidi isolate", "a\u2066b", "", false},
		{"a zero-width space", "Fix\u200Bthe build", "", false},
		{"a zero-width joiner", "a\u200Db", "", false},
		{"a byte-order mark inside", "a\uFEFFb", "", false},
		{"a line break inside", "Fix\nthe build", "", false},
		{"only invisible characters", "\u200B\u200C", "", false},
		{"a combining mark", "cafe\u0301", "cafe\u0301", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			id := r.create()
			s, err := r.m.Rename(id, tc.title)
			if !tc.ok {
				isKind(is, err, hub.Invalid) // refused with 400
				return
			}
			is.NoErr(err)                          // renamed
			is.Equal(s.Title, tc.want)             // trimmed
			is.Equal(r.m.List()[0].Title, tc.want) // the inventory says so
		})
	}
}

func TestMissingAgent(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	_, err := r.m.Create(context.Background(), "absent", "")
	isKind(is, err, hub.Conflict)                                  // an agent not installed is a conflict
	is.True(strings.Contains(hub.MessageOf(err), "not installed")) // saying so
	_, err = r.m.Create(context.Background(), "nobody", "")
	isKind(is, err, hub.NotFound) // an unknown agent is not found

	id := r.create()
	r.rt.SetAvailability("scripted", chat.AgentNotInstalled)
	_, err = r.m.Send(context.Background(), id, chat.Message{Text: "hello"})
	isKind(is, err, hub.Conflict) // a prompt to a conversation of a missing agent
	r.rt.SetAvailability("scripted", chat.AgentAvailable)
	r.send(id, "hello") // usable again once the agent is back
	r.turn().End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
}

// A rename the inventory cannot save answers Internal rather than a
// success; the title is kept and goes out with the next save.
func TestRenameThatCannotBeSaved(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	r.store.Fail(errors.New("disk full"))
	_, err := r.m.Rename(id, "Build fix")
	isKind(is, err, hub.Internal) // the client hears it was not saved
	r.store.Fail(nil)
	_, err = r.m.Rename(id, "Build fix, again")
	is.NoErr(err) // the next change saves
	recs, err := r.store.LoadConversations()
	is.NoErr(err)
	is.Equal(len(recs), 1)                      // the conversation
	is.Equal(recs[0].Title, "Build fix, again") // with its latest title
}

// A title nobody chose (the first line of the first message, or the
// agent's) is kept without the characters a title refuses, so it cannot
// hide or reorder what a person reads either.
func TestDerivedTitlesDropInvisibleCharacters(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	_, err := r.m.Create(context.Background(), "scripted", "a\u202Eb")
	isKind(is, err, hub.Invalid) // a title given at creation follows the rule too
	rd := r.follow(id)
	r.send(id, "\u202Erun\u200B me\u2069\nsecond line")
	turn := r.turn()
	title := "\u2067agent\u200C title"
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)
	is.Equal(r.m.List()[0].Title, "run me") // the first line, cleaned

	r.send(id, "again")
	turn = r.turn()
	turn.Send(chat.AgentSessionInfo{Title: &title})
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)
	is.Equal(r.m.List()[0].Title, "agent title") // the agent's title, cleaned
}

// An agent that said at `initialize` it takes no images never gets one:
// a message with images is refused at once (400), and one held while an
// earlier agent process took them is not sent to a later one that does
// not.
func TestImagesAreRefusedForAnAgentThatTakesNone(t *testing.T) {
	t.Run("sent", func(t *testing.T) {
		is := is.New(t)
		r := newRig(t)
		r.rt.SetImages(false)
		id := r.create()
		_, err := r.m.Send(context.Background(), id, chat.Message{Text: "look", Attachments: []chat.Attachment{{Data: png}}})
		isKind(is, err, hub.Invalid)                                                            // refused with 400
		is.Equal(hub.MessageOf(err), "Scripted takes no images; send the message without them") // saying why
		s, err := r.m.Snapshot(id)
		is.NoErr(err)
		is.Equal(len(s.Items), 0) // nothing was delivered
		r.send(id, "look")        // text alone goes through
		is.Equal(r.turn().Prompt.Text, "look")
	})
	t.Run("held", func(t *testing.T) {
		is := is.New(t)
		r := newRig(t)
		id := r.create()
		rd := r.follow(id)
		r.send(id, "first")
		first := r.turn()
		held, err := r.m.Send(context.Background(), id, chat.Message{Text: "look", Attachments: []chat.Attachment{{Data: png}}})
		is.NoErr(err) // this agent takes images
		is.True(held.Held)
		r.rt.SetImages(false)                         // the next agent process will not
		first.Conn.Crash(errors.New("exit status 1")) // and the agent restarts
		rd.until("the held message refused", func(ev event) bool {
			return ev.Item["kind"] == chat.KindNotice && contains(ev.Item["message"].(string), "takes no images")
		})
		r.send(id, "after")
		is.Equal(r.turn().Prompt.Text, "after") // the image never reached the agent: this is its next prompt
	})
}
