package main

import (
	"fmt"

	"github.com/wharfhub/wharf/adapters/session/docfeed"
)

// This file writes the W5, W6 and W12 sections, what the live figures
// say, and D1.

func (l *liveReport) w5w6w12Sections(b *mdWriter) {
	p := b.p
	if l.W5 != nil || l.W5Probe != nil {
		p("### W5: subscription changes while events flow\n\n")
		p("%d streams open on A subscribed to its inventory; A's inventory ticks %d times a second (each tick's payload carries its "+
			"number); every stream removes and adds the subscription in turn, %d times a second (`POST /api/hub/live/{streamId}/subscriptions`, "+
			"an addition carrying the stream's last cursor), each POST sent at its scheduled time over a shared keep-alive client (open "+
			"loop: latency from the scheduled time to the answer read); %s warm-up, then %s measured. Two checks that no envelope of a "+
			"removed subscription comes after the POST answered: **server side**, the tap marks a stream removed when the removal's "+
			"handler has returned 200 and unmarks it before an addition reaches the handler; any write of an inventory envelope to a "+
			"marked stream counts. **Client side**, after a removal answers the worker notes how many ticks were published; a tick "+
			"numbered above that (so published after the answer) read before the next addition was sent counts.\n\n",
			w5Streams, w5TickRate, w5Changes, secs(w5Warmup), secs(w5Window))
		p("| server | POSTs | p50 | p90 | p99 | p99.9 | max | non-200 / errors | ticks | inventory envelopes read | late (server side) | late (client side) | CPU | other procs |\n")
		p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range []*w5Result{l.W5Probe, l.W5} {
			if r == nil {
				continue
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %d / %d | %d | %d | %d | %d | %s | %s |\n", r.Target, r.Posts, ms(r.Lat.P50), ms(r.Lat.P90),
				ms(r.Lat.P99), ms(r.Lat.P999), ms(r.Lat.Max), r.Non200, r.Errors, r.Ticks, r.InvReceived, r.ServerLate, r.ClientLate,
				secs(r.CPU), pct(r.Others))
		}
		p("\n")
	}
	if l.W6 != nil || l.W6Probe != nil {
		p("### W6: every stream dropped and reconnected with its cursor\n\n")
		p("%d streams open on A subscribed to its inventory (ticks %d a second throughout) and wait for `ready`; one second later "+
			"every connection is closed at once, and each stream reconnects within %s (evenly spread) with `reconnect=1` and "+
			"`subs=[{\"topic\":\"inventory\",\"cursor\":<its last cursor>}]`. Each reconnected stream must see `: open` and hello "+
			"within %s, then its join: the latest tick (when its cursor is behind the head) and `ready`, before any newer tick, and "+
			"cursors that only go forward. %s after the reconnects the streams close; the servers' goroutines are counted every "+
			"100 ms until they are back to their count before the first stream (the inventory upstream outlives its last subscriber "+
			"by 3 s by design).\n\n", w6Streams, w6TickRate, secs(w6Spread), secs(w6MaxHello), secs(w6Live))
		p("| server | reconnected | `: open` p50 / p99 / max | hello p50 / p99 / max | last hello after the drop | replayed + ready | ready only | out of order | no ready | goroutines before / open / last | back to baseline after |\n")
		p("|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range []*w6Result{l.W6Probe, l.W6} {
			if r == nil {
				continue
			}
			p("| %s | %d | %s / %s / %s | %s / %s / %s | %s | %d | %d | %d | %d | %d / %d / %d | %s |\n", r.Target, r.Reconnected,
				ms(r.Open.P50), ms(r.Open.P99), ms(r.Open.Max), ms(r.Hello.P50), ms(r.Hello.P99), ms(r.Hello.Max), ms(r.HelloMax),
				r.Replayed, r.AtHead, r.BadOrder, r.NoReady, r.G0, r.GOpen, r.GLast, secs(r.Settled))
		}
		p("\n")
	}
	if w := l.W12; w != nil {
		p("### W12: idle streams\n\n")
		p("The process's CPU (getrusage, client and servers) over %s with no stream open, then %d streams open on A with no "+
			"subscription and no activity, and the CPU over %s starting 1 s after the last opened: a window in which each stream is "+
			"owed exactly %d keepalive(s). The real clock throughout. CPU with the streams %s (%.2f %% of one core), without %s "+
			"(%.2f %%); other processes used %s and %s of the machine. Intervals count from each stream's hello.\n\n",
			secs(w.IdleWindow), w.Streams, secs(w.Window), w.Expected, secs(w.CPU), 100*w.CPU.Seconds()/w.Window.Seconds(),
			secs(w.IdleCPU), 100*w.IdleCPU.Seconds()/w.IdleWindow.Seconds(), pct(w.Others), pct(w.IdleOthers))
	}
}

// reading adds what the live figures say.
func (l *liveReport) reading(b *mdWriter, ncpu int) {
	p := b.p
	w, pr := l.W3, l.W3Probe
	if w == nil || pr == nil || w.Received == 0 || pr.Received == 0 {
		return
	}
	p("Live fan-out: at %d streams one change is %d envelopes, each its own `write` on the server and its own `read` in the "+
		"client, on loopback, both in this process on %d CPU(s). The probe used %s of process CPU per envelope delivered "+
		"(client included) and Wharf %s, %s more.", w.Streams, w.Streams, ncpu, us(pr.cpuPerEnvelope()), us(w.cpuPerEnvelope()),
		us(w.cpuPerEnvelope()-pr.cpuPerEnvelope()))
	if c := l.W3Core; c != nil && c.Err == "" {
		p(" The Hub's core alone (the same %d streams through `hub.OpenLive` and `LiveStream.Next`, with no HTTP, socket or client; "+
			"diagnosis, not judged) delivered %d changes with p50 %s, p99 %s, %d lost, using %s per envelope.",
			c.Streams, c.Changes, ms(c.Lat.P50), ms(c.Lat.P99), c.Lost, us(c.cpuPerEnvelope()))
	}
	if w.Lat.P50 > w3MaxP50 {
		p(" W3's p50 misses %s by %s; the probe's own p50 is %s (%.0f %% of the target), so on this machine the sockets and "+
			"the in-process client take most of the budget before Wharf adds %s.", ms(w3MaxP50), ms(w.Lat.P50-w3MaxP50),
			ms(pr.Lat.P50), 100*float64(pr.Lat.P50)/float64(w3MaxP50), ms(w.Lat.P50-pr.Lat.P50))
	}
	p(" `-cpuprofile` attributes the difference.\n\n")
}

func (r *d1Result) verdicts() []verdict {
	w, f := r.Wharf, r.Feed
	complete := fmt.Sprintf("%s from the stream's opening (first document data after %s, `ready` after %s)%s; the child's feed "+
		"in-process: %s (%.2f × it)", secs(w.Complete), ms(w.FirstData), ms(w.Ready), errNote(w.Err), secs(f.Complete),
		ratio(float64(w.Complete), float64(f.Complete)))
	saves := fmt.Sprintf("%s over %d saves (p50 %s, max %s); the child's feed in-process: p99 %s (%.2f × it)%s", ms(w.Saves.P99), w.Saves.N,
		ms(w.Saves.P50), ms(w.Saves.Max), ms(f.Saves.P99), ratio(float64(w.Saves.P99), float64(f.Saves.P99)), errNote(f.Err))
	return []verdict{
		{fmt.Sprintf("D1 first complete document snapshot, %d files", r.Files), complete, "≤ " + secs(d1MaxComplete) + " (absolute)",
			w.Err == "" && w.Complete > 0 && w.Complete <= d1MaxComplete},
		{"D1 save → patch p99", saves, "≤ " + ms(d1MaxSaveP99) + " (absolute)",
			w.Err == "" && w.Saves.N >= 20 && w.Saves.P99 <= d1MaxSaveP99},
	}
}

func (r *d1Result) markdown(b *mdWriter) {
	p := b.p
	p("## D1: the document topic of a real workspace child\n\n")
	p("A committed Git repository of %d files is generated in a temp dir (100 per directory; markdown, text and binary, as "+
		"`docfeed`'s own benchmark makes it; %s to write and commit). The baseline is the child's document feed, `docfeed.New` "+
		"and `Subscribe` in this process, on that repository. Then a Wharf whose local backend runs the freshly built `wharf "+
		"session` registers and starts the repository, and a live stream subscribes to its document topic (default context): "+
		"the Hub opens the child's `/_wharf/feeds/document`, which starts indexing the folder, and relays it. **Complete** is "+
		"the time from the subscription (the stream's dial) to the first update whose discovery is `ready` (every file "+
		"listed). Then %d saves, %s apart, each rewriting a different markdown file: the time from the write to the patch "+
		"upserting that file (`relativePath`) on the stream (the feed waits for %s of quiet before it publishes).\n\n",
		r.Files, secs(r.Generate), d1Saves, ms(d1SaveGap), ms(docfeed.DefaultQuiet))
	p("| side | first document data | `ready` | complete | save → patch p50 | p90 | p99 | max | saves |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range []struct {
		name string
		r    d1Run
	}{{"`docfeed` in-process (baseline)", r.Feed}, {"Wharf: child + Hub + live stream", r.Wharf}} {
		ready := "—"
		if x.r.Ready > 0 {
			ready = ms(x.r.Ready)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %d%s |\n", x.name, ms(x.r.FirstData), ready, secs(x.r.Complete),
			ms(x.r.Saves.P50), ms(x.r.Saves.P90), ms(x.r.Saves.P99), ms(x.r.Saves.Max), x.r.Saves.N, errNote(x.r.Err))
	}
	p("\nA second stream opened after that got the Hub's materialized snapshot (%s) after %s.%s\n\n",
		kb(float64(r.JoinerBytes)), ms(r.Joiner), errNote(r.Err))
}
