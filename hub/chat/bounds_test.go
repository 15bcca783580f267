package chat_test

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/chat"
)

// running starts a conversation whose turn the test plays.
func (r *rig) running() (string, *reader, *fakes.AgentTurn) {
	r.t.Helper()
	id := r.create()
	rd := r.follow(id)
	r.send(id, "go")
	return id, rd, r.turn()
}

// snapshotItems is the conversation's items and the snapshot's size.
func (r *rig) snapshotItems(id string) ([]map[string]any, int) {
	r.t.Helper()
	s, err := r.m.Snapshot(id)
	if err != nil {
		r.t.Fatalf("snapshot: %v", err)
	}
	b, _ := json.Marshal(s)
	return items(r.t, s), len(b)
}

// noticeSaying returns the notices whose message holds sub.
func noticeSaying(its []map[string]any, sub string) []map[string]any {
	var out []map[string]any
	for _, it := range ofKind(its, chat.KindNotice) {
		if strings.Contains(it["message"].(string), sub) {
			out = append(out, it)
		}
	}
	return out
}

func str(s string) *string { return &s }

// small are bounds small enough for the tests to pass them quickly; the
// code is the same as with the constants.
var small = chat.Bounds{MessageItemBytes: 256 << 10, ItemBytes: 16 << 10, ConversationBytes: 1 << 20}

// An answer streamed past its bound is cut there, whole characters only,
// and a notice says how much is not shown.
func TestAStreamedAnswerIsCutAtItsBoundWithANotice(t *testing.T) {
	is := is.New(t)
	r := newBoundedRig(t, small)
	id, _, turn := r.running()
	chunk := strings.Repeat("é", 1<<10) + "a" // 2 KiB and one: characters straddle the bound
	sent := 0
	for sent < small.MessageItemBytes+64<<10 {
		turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: chunk})
		sent += len(chunk)
	}
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended (a reader would have fallen out of the replay log)
	its, _ := r.snapshotItems(id)
	md := ofKind(its, chat.KindAssistantMessage)[0]["markdown"].(string)
	is.True(len(md) <= small.MessageItemBytes)      // cut at the bound
	is.True(len(md) > small.MessageItemBytes-1<<10) // not before it
	is.True(utf8.ValidString(md))                   // on a character boundary
	ns := noticeSaying(its, "longer than 256.0 KiB")
	is.Equal(len(ns), 1)                                              // one notice says so
	is.True(strings.Contains(ns[0]["message"].(string), "not shown")) // and what is not shown
}

// A tool call's output past MaxItemBytes is cut: text at the bound, a
// diff that does not fit left out; its title stays, and a notice names
// the tool call.
func TestAToolCallsOutputIsCutAtItsBoundWithANotice(t *testing.T) {
	is := is.New(t)
	r := newBoundedRig(t, small)
	id, _, turn := r.running()
	long := strings.Repeat("x", 2*small.ItemBytes)
	newText := strings.Repeat("n", small.ItemBytes)
	callID := strings.Repeat("c", 4096) // an id past any sense
	turn.Send(chat.AgentToolCall{ID: callID, New: true, Title: str("Read big.log"), Kind: str("read"), Status: str("completed"),
		Content: []chat.AgentToolContent{{Type: "text", Text: long}, {Type: "diff", Path: "big.txt", NewText: newText}}})
	turn.Send(chat.AgentToolCall{ID: callID, Status: str("completed")}) // the same call again
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended (a reader would have fallen out of the replay log)
	its, _ := r.snapshotItems(id)
	tools := ofKind(its, chat.KindTool)
	is.Equal(len(tools), 1) // one item for the call, its long id digested the same each time
	tool := tools[0]
	is.True(len(tool["id"].(string)) < 100) // a bounded id
	is.Equal(tool["title"], "Read big.log") // the title kept
	b, _ := json.Marshal(tool)
	is.True(len(b) <= small.ItemBytes+1<<10) // the item within its bound
	content := tool["content"].([]any)
	is.Equal(len(content), 1)                                                      // the diff that did not fit left out
	is.True(len(content[0].(map[string]any)["text"].(string)) > small.ItemBytes/2) // the text cut, not dropped
	ns := noticeSaying(its, `The output of "Read big.log" was longer than 16.0 KiB`)
	is.Equal(len(ns), 1) // a notice names it
}

// A conversation past MaxConversationBytes keeps its newest items and
// trims the oldest, which say so (`trimmed`), with a notice; a snapshot
// stays within the bound whatever the agent sent.
func TestAConversationIsTrimmedToItsBound(t *testing.T) {
	is := is.New(t)
	r := newBoundedRig(t, small)
	id, _, turn := r.running()
	out := strings.Repeat("o", small.ItemBytes-4<<10)
	calls := 2 * small.ConversationBytes / small.ItemBytes // twice the bound
	for i := range calls {
		turn.Send(chat.AgentToolCall{ID: "call-" + strconv.Itoa(i), New: true, Title: str("Run " + strconv.Itoa(i)),
			Kind: str("execute"), Status: str("completed"), Content: []chat.AgentToolContent{{Type: "text", Text: out}}})
	}
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended (a reader would have fallen out of the replay log)
	its, size := r.snapshotItems(id)
	is.True(size <= small.ConversationBytes+small.ItemBytes) // the snapshot within the bound
	cmds := ofKind(its, chat.KindCommand)
	is.Equal(len(cmds), calls)                   // every call still listed
	is.Equal(cmds[0]["trimmed"], true)           // the oldest trimmed
	is.Equal(cmds[0]["title"], "Run 0")          // saying what it was
	is.True(cmds[len(cmds)-1]["trimmed"] == nil) // the newest whole
	text := cmds[len(cmds)-1]["content"].([]any)[0].(map[string]any)["text"].(string)
	is.Equal(len(text), len(out))                                   // with its output
	is.True(len(noticeSaying(its, "Older output was dropped")) > 0) // a notice says so
}

// Items too small to trim still count (their overhead): a flood of them
// removes the oldest (item.remove), within the bound.
func TestAFloodOfSmallItemsRemovesTheOldest(t *testing.T) {
	is := is.New(t)
	r := newBoundedRig(t, small)
	id, _, turn := r.running()
	msg := strings.Repeat("n", 1<<10)
	n := 2 * small.ConversationBytes / (len(msg) + 256)
	for i := range n {
		turn.Send(chat.AgentNotice{Level: "info", Message: strconv.Itoa(i) + msg})
	}
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended (a reader would have fallen out of the replay log)
	its, size := r.snapshotItems(id)
	is.True(size <= small.ConversationBytes+small.ItemBytes) // within the bound
	is.True(len(its) < n)                                    // the oldest removed
	is.Equal(len(ofKind(its, chat.KindUserMessage)), 0)      // the first of them the user's message
	var kept []string
	for _, it := range noticeSaying(its, msg) {
		kept = append(kept, it["message"].(string))
	}
	is.True(strings.HasPrefix(kept[len(kept)-1], strconv.Itoa(n-1))) // the newest kept
	is.True(!strings.HasPrefix(kept[0], "0n"))                       // the oldest gone
}

// Streamed text grows in amortised constant time per byte: 8 MiB in 4 KiB
// chunks allocates a small multiple of 8 MiB, where copying the text at
// every chunk allocated 8 GiB.
func TestStreamedTextGrowsInLinearTime(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id, _, turn := r.running()
	chunk := strings.Repeat("t", 4<<10)
	const total = 8 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range total / len(chunk) {
		turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: chunk})
	}
	runtime.ReadMemStats(&after)
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	r.activity(chat.Activity{}) // the turn ended (a reader would have fallen out of the replay log)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB allocated for %d MiB of text", allocated>>20, total>>20)
	is.True(allocated < 16*total) // linear, not quadratic
	its, _ := r.snapshotItems(id)
	is.Equal(len(ofKind(its, chat.KindAssistantMessage)[0]["markdown"].(string)), total) // and whole
}

// Requests awaiting the user are never trimmed, so their number is
// bounded: past MaxPendingRequests the agent's request is refused (its
// reject option chosen), with a notice.
func TestPendingRequestsAreBounded(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id, rd, turn := r.running()
	ask := chat.AgentPermissionRequest{Options: []chat.AgentPermissionOption{{ID: "yes", Name: "Yes", Kind: "allow_once"},
		{ID: "no", Name: "No", Kind: "reject_once"}}}
	for range chat.MaxPendingRequests {
		turn.Ask(ask)
	}
	_, answer := turn.Ask(ask)
	select {
	case v := <-answer:
		is.Equal(v, "no") // one too many is rejected
	case <-time.After(deadline):
		t.Fatal("the request past the bound waits")
	}
	rd.until("the notice", func(ev event) bool {
		return ev.Item["kind"] == chat.KindNotice && contains(ev.Item["message"].(string), "the rest were refused")
	})
	its, _ := r.snapshotItems(id)
	is.Equal(len(ofKind(its, chat.KindPermission)), chat.MaxPendingRequests) // the others shown
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
}
