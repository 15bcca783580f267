package chat_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// closed waits for ch to close, failing the test after deadline.
func closed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("%s: not within %s", what, deadline)
	}
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// revision is agent id's catalog revision in the inventory, and the
// channel that fires when the inventory changes next.
func (r *rig) revision(id string) (string, <-chan struct{}) {
	catalogs, wait := r.m.Inventory()
	return catalogs[id], wait
}

func TestALoginChangeLetsTheRunningTurnEndThenStartsAFreshAgent(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "go")
	turn := r.turn()
	old := turn.Conn
	before, changed := r.revision("scripted")

	is.NoErr(r.m.AgentLoginChanged("scripted")) // told
	closed(t, changed, "the inventory's tick")
	after, _ := r.revision("scripted")
	is.True(after != before)                  // the agent's catalog revision moved
	is.True(!isClosed(old.Done()))            // the agent of the running turn is not stopped
	is.True(!isClosed(turn.Context().Done())) // nor its turn cancelled
	a, _ := r.m.Activity()
	is.True(a.Working) // the turn still runs

	turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: "done"})
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)              // the turn ended as the agent said
	closed(t, old.Done(), "the old agent's end") // and then its agent went
	is.NoErr(old.Err())                          // closed, not crashed

	r.send(id, "again")
	next := r.turn()
	is.True(next.Conn != old)                      // the next prompt has a fresh agent
	is.Equal(len(r.rt.Connections("scripted")), 2) // started once more
	is.Equal(next.SessionID, turn.SessionID)       // which reopened the conversation's session
	next.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)
	s, err := r.m.Snapshot(id)
	is.NoErr(err)
	for _, n := range ofKind(items(t, s), chat.KindNotice) {
		is.True(!contains(n["message"].(string), "exited")) // closing the old agent is no exit
	}
}

func TestALoginChangeClosesAnIdleAgentAtOnce(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	old := r.rt.Connections("scripted")[0]

	is.NoErr(r.m.AgentLoginChanged("scripted"))
	closed(t, old.Done(), "the idle agent's end") // nothing runs on it: it goes now
	is.NoErr(old.Err())

	rd := r.follow(id)
	r.send(id, agentscript.Stream)
	rd.status(chat.StatusCompleted)                // the conversation goes on
	is.Equal(len(r.rt.Connections("scripted")), 2) // on a fresh agent
}

func TestAConversationThatNeededALoginWorksAfterTheLogin(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	rd := r.follow(id)
	r.send(id, agentscript.Auth)
	rd.status(chat.StatusFailed)
	is.Equal(r.m.Agents()[0].Availability, "login-required") // the agent asked for a login
	before, changed := r.revision("scripted")

	is.NoErr(r.m.AgentLoginChanged("scripted")) // someone logged it in on the Hub
	closed(t, changed, "the inventory's tick")
	after, _ := r.revision("scripted")
	is.True(after != before)                            // its catalog moved
	is.Equal(r.m.Agents()[0].Availability, "available") // and it is available again
	is.Equal(r.m.Agents()[0].CatalogRevision, after)    // as the list says

	r.send(id, agentscript.Stream)
	rd.status(chat.StatusCompleted)                // the next prompt works
	is.Equal(len(r.rt.Connections("scripted")), 2) // on an agent that read the new login
}

// A turn that began before the login changed ran on the old agent: its
// refusal says nothing of the new login.
func TestALoginRefusalFromBeforeTheChangeDoesNotCount(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "go")
	turn := r.turn()
	is.NoErr(r.m.AgentLoginChanged("scripted"))
	turn.End(chat.AgentTurnResult{}, fakes.LoginRequired("Scripted"))
	rd.status(chat.StatusFailed)                        // the turn failed as the agent said
	is.Equal(r.m.Agents()[0].Availability, "available") // but the agent is not marked as needing a login

	r.send(id, "after")
	turn = r.turn()
	turn.End(chat.AgentTurnResult{}, fakes.LoginRequired("Scripted"))
	rd.status(chat.StatusFailed)
	is.Equal(r.m.Agents()[0].Availability, "login-required") // a refusal since the change counts
}

func TestALoginChangeOfAnUnknownAgentChangesNothing(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.create()
	before, changed := r.m.Inventory()
	is.NoErr(r.m.AgentLoginChanged("nobody")) // no error
	after, _ := r.m.Inventory()
	is.Equal(after, before)                                    // no catalog moved
	is.True(!isClosed(changed))                                // no tick
	is.True(!isClosed(r.rt.Connections("scripted")[0].Done())) // no agent stopped
}

func TestALoginChangeAfterCloseIsUnavailable(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.m.Close()
	err := r.m.AgentLoginChanged("scripted")
	is.Equal(hub.KindOf(err), hub.Unavailable) // the session is stopping
}

// gatedRuntime holds each Start until its gate closes.
type gatedRuntime struct {
	*fakes.AgentRuntime
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedRuntime) Start(ctx context.Context, id, dir string, sink chat.AgentSink) (chat.AgentConnection, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	return g.AgentRuntime.Start(ctx, id, dir, sink)
}

// An agent that was starting when the login changed may have read the
// old login: it is never used.
func TestAnAgentStartingDuringALoginChangeIsNotUsed(t *testing.T) {
	is := is.New(t)
	rt := &gatedRuntime{AgentRuntime: fakes.NewAgentRuntime(
		chat.AgentDescriptor{ID: "scripted", Name: "Scripted", Availability: chat.AgentAvailable}),
		entered: make(chan struct{}, 1), gate: make(chan struct{})}
	m, err := chat.New(chat.Config{Runtime: rt, Store: &fakes.ConversationStore{}, Dir: "/work/space", Clock: fakes.NewClock(epoch)})
	is.NoErr(err)
	t.Cleanup(m.Close)
	created := make(chan error, 1)
	go func() {
		_, err := m.Create(context.Background(), "scripted", "")
		created <- err
	}()
	closed(t, rt.entered, "the agent's start")
	is.NoErr(m.AgentLoginChanged("scripted")) // while it starts
	close(rt.gate)
	select {
	case err := <-created:
		is.NoErr(err) // the conversation is made
	case <-time.After(deadline):
		t.Fatal("create did not return")
	}
	conns := rt.Connections("scripted")
	is.Equal(len(conns), 2)             // a second agent was started
	is.True(isClosed(conns[0].Done()))  // the first, closed unused
	is.NoErr(conns[0].Err())            // by the core
	is.True(!isClosed(conns[1].Done())) // the second runs
}

// An agent that died just as its login changed did exit: closing it is
// not the core's doing, and the failed turn's notice says it exited.
func TestAnAgentThatDiedAsItsLoginChangedIsSaidToHaveExited(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "go")
	turn := r.turn()
	turn.End(chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, errors.New("peer disconnected before response"),
		"Scripted: the turn failed (error -32603)"))
	rd.status(chat.StatusFailed)
	turn.Conn.Crash(errors.New("exit status 3"))
	is.NoErr(r.m.AgentLoginChanged("scripted"))
	ev := rd.until("the exit's notice", func(ev event) bool {
		return ev.Item["kind"] == chat.KindNotice && contains(ev.Item["message"].(string), "exited")
	})
	is.Equal(ev.Item["message"], "Scripted exited during the turn; the next message starts it again.") // the exit is said
}
