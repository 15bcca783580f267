package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wharfhub/wharf/bench/internal/proc"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// What an agent's output costs the workspace child: the time of streamed
// text against its length, and the child's memory after a flood of tool
// output (hub/chat's bounds).

// textChunk is the size of the chunks of the streamed-text runs: what
// agents send is smaller still, so this is the kinder case for copying.
const textChunk = 4 << 10

// turnTimeout bounds one measured turn.
const turnTimeout = 5 * time.Minute

// finish sends text to c and waits until the conversation's status,
// read from the inventory every 10 ms, is `completed`; it returns the
// wall time from the send and the child's CPU time (its own and its
// waited-for children's, in clock ticks). The send answers once the turn
// runs (status `running`), so no earlier `completed` is mistaken for it.
func (w *wharf) finish(ctx context.Context, c conversation, child int, text string) (time.Duration, int64, error) {
	_, ticks0, err := proc.Stat(child)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if err := w.send(ctx, c, text); err != nil {
		return 0, 0, err
	}
	for limit := t0.Add(turnTimeout); ; {
		var list struct {
			Conversations []struct{ ID, Status string } `json:"conversations"`
		}
		if err := w.do(ctx, "GET", "s/"+c.ws+"/api/chat/conversations", nil, &list, 200); err != nil {
			return 0, 0, err
		}
		for _, s := range list.Conversations {
			if s.ID == c.id && s.Status == "completed" {
				took := time.Since(t0)
				_, ticks1, err := proc.Stat(child)
				return took, ticks1 - ticks0, err
			}
			if s.ID == c.id && s.Status != "running" {
				return 0, 0, fmt.Errorf("the turn %q ended %s", text, s.Status)
			}
		}
		if time.Now().After(limit) {
			return 0, 0, fmt.Errorf("the turn %q did not complete within %s", text, turnTimeout)
		}
		sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
	}
}

// alone opens a conversation in a workspace of its own, named name, and
// finds the workspace's child process, whose CPU and memory are measured.
func (w *wharf) alone(ctx context.Context, name string) (conversation, int, error) {
	ws, err := w.workspace(ctx, name)
	if err != nil {
		return conversation{}, 0, err
	}
	c, err := w.newConversation(ctx, ws)
	if err != nil {
		return conversation{}, 0, err
	}
	child := proc.SessionChild(w.d.Pid(), ws)
	if child == 0 {
		return conversation{}, 0, fmt.Errorf("no session child found for workspace %s", ws)
	}
	return c, child, nil
}

// streamedText measures one answer of 16 MiB in 4 KiB chunks against 16
// answers of 1 MiB in the same chunks, in a conversation of a workspace
// of its own: the same bytes, the same chunks. With text grown in linear
// time they cost the same; copying the text at every chunk made the one
// answer cost 16 times as much.
func streamedText(ctx context.Context, w *wharf) (verdict, error) {
	progress("streamed text: 16 × 1 MiB, then 16 MiB, in chunks of %d KiB", textChunk>>10)
	c, child, err := w.alone(ctx, "text")
	if err != nil {
		return verdict{}, err
	}
	prompt := func(n int) string { return fmt.Sprintf("%s %d %d", agentscript.Text, n, textChunk) }
	if _, _, err := w.finish(ctx, c, child, prompt(64<<10)); err != nil { // the agent starts; the path is warm
		return verdict{}, err
	}
	var small time.Duration
	var smallTicks int64
	for range 16 {
		took, ticks, err := w.finish(ctx, c, child, prompt(1<<20))
		if err != nil {
			return verdict{}, err
		}
		small, smallTicks = small+took, smallTicks+ticks
	}
	big, bigTicks, err := w.finish(ctx, c, child, prompt(16<<20))
	if err != nil {
		return verdict{}, err
	}
	var snap struct {
		Items []struct {
			Kind     string `json:"kind"`
			Markdown string `json:"markdown"`
		} `json:"items"`
	}
	if err := w.do(ctx, "GET", c.path(""), nil, &snap, 200); err != nil {
		return verdict{}, err
	}
	last := ""
	for _, it := range snap.Items {
		if it.Kind == "assistant_message" && it.Markdown != "" {
			last = it.Markdown
		}
	}
	ratio := float64(big) / float64(max(small, 1))
	ok := ratio <= 2 && len(last) == 16<<20
	return verdict{"Streamed text: one 16 MiB answer against 16 answers of 1 MiB (4 KiB chunks, one conversation)",
		fmt.Sprintf("%.2f × (16 MiB in %.2f s, the child's CPU %.2f s; 16 × 1 MiB in %.2f s, CPU %.2f s); the answer whole in the snapshot: %v",
			ratio, big.Seconds(), float64(bigTicks)/100, small.Seconds(), float64(smallTicks)/100, len(last) == 16<<20),
		"≤ 2 ×, whole", &ok}, nil
}

// floodRSSTarget is the child's memory a flood of tool output may leave:
// a conversation keeps at most 64 MiB of items (hub/chat), which the
// collector may double, over the child's own 30 to 40 MiB.
const floodRSSTarget = 192 << 20

// toolFlood measures the child's memory after an agent's 200 tool calls
// of 1 MiB of output each, in a conversation of a workspace of its own.
func toolFlood(ctx context.Context, w *wharf) (verdict, error) {
	const calls, size = 200, 1 << 20
	progress("tool output flood: %d tool calls of %d KiB", calls, size>>10)
	c, child, err := w.alone(ctx, "flood")
	if err != nil {
		return verdict{}, err
	}
	sleepUntil(ctx, time.Now().Add(2*time.Second))
	before, err := settledRSS(ctx, child)
	if err != nil {
		return verdict{}, err
	}
	took, ticks, err := w.finish(ctx, c, child, fmt.Sprintf("%s %d %d", agentscript.Tools, calls, size))
	if err != nil {
		return verdict{}, err
	}
	sleepUntil(ctx, time.Now().Add(2*time.Second))
	after, err := settledRSS(ctx, child)
	if err != nil {
		return verdict{}, err
	}
	peak, err := proc.StatusBytes(child, "VmHWM")
	if err != nil {
		return verdict{}, err
	}
	status, body, err := w.api.Do(ctx, "GET", c.path(""), nil, nil)
	if err == nil && status != 200 {
		err = fmt.Errorf("snapshot: %d", status)
	}
	if err != nil {
		return verdict{}, err
	}
	var snap struct {
		Items []struct {
			Kind    string `json:"kind"`
			Trimmed bool   `json:"trimmed"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &snap); err != nil {
		return verdict{}, err
	}
	tools, trimmed := 0, 0
	for _, it := range snap.Items {
		if it.Kind == "tool" {
			tools++
			if it.Trimmed {
				trimmed++
			}
		}
	}
	ok := after <= floodRSSTarget
	return verdict{fmt.Sprintf("Child RSS after %d MiB of tool output (%d tool calls of 1 MiB, one conversation)", calls*size>>20, calls),
		fmt.Sprintf("%.0f MiB settled after (%.0f MiB before; peak %.0f MiB); the snapshot %.1f MiB, %d tool items, %d of them trimmed; %.1f s, the child's CPU %.1f s",
			float64(after)/(1<<20), float64(before)/(1<<20), float64(peak)/(1<<20), float64(len(body))/(1<<20), tools, trimmed,
			took.Seconds(), float64(ticks)/100),
		fmt.Sprintf("≤ %d MiB", floodRSSTarget>>20), &ok}, nil
}
