package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// W13: big agent answers on the conversation topic. The bench publishes,
// as A's session would, turns of one conversation: a 16 MiB assistant
// message in one frame (an agent that sends its whole answer as one
// chunk: the frame the Hub's stream bound once mistook for a stalled
// client), then 1 MiB of streamed text (256 deltas of 4 KiB, one a
// millisecond) and the turn's end. Ten fast streams follow it, each read
// at full speed by its own goroutine, which keeps only the head of each
// frame and counts its bytes. It runs twice: alone, the baseline, and
// with an eleventh stream opened first that reads its opening and then
// nothing (tagged bench=slow, so the tap notes when the Hub ends it).
// Latency is from publishing a big frame to the reader having read its
// last byte; a turn is published once every fast stream has the last.

const (
	w13Streams, w13Turns  = 10, 5
	w13Answer, w13Delta   = 16 << 20, 4 << 10
	w13Deltas, w13TurnGap = 256, 2 * time.Second
	w13Key                = "perf:big"
	w13TurnWait           = 30 * time.Second                   // for every fast stream to have a turn
	w13StallWait          = live.StallTimeout + 20*time.Second // for the Hub to end the stalled stream
	w13MaxRatio           = 1.25
)

// w13Run is one run's figures.
type w13Run struct {
	stalled         bool
	lat             []time.Duration // big frame latencies, every fast stream and turn
	turns, ended    int             // turns every fast stream had; fast streams that ended early
	bad             []string        // frames missing, cut, or out of order (first few)
	stalledEnded    time.Duration   // after the stalled stream's last read; -1 never
	heapPeak, heap0 uint64
	err             string
}

func runW13(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	h.backend.SetFeedOpener(h.wharf.ws, hub.TopicConversation, func(hub.FeedRequest) ([]hub.FeedFrame, error) { return nil, nil })
	var runs []*w13Run
	for _, stalled := range []bool{false, true} {
		settle(ctx)
		runs = append(runs, e.w13(ctx, h, stalled))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return w13Verdicts(runs[0], runs[1]), nil
}

// w13 is one run: the streams, the turns, the stalled stream's end.
func (e *env) w13(ctx context.Context, h *liveHub, stalled bool) *w13Run {
	t, r := h.wharf, &w13Run{stalled: stalled, stalledEnded: -1}
	e.progress("W13: %d fast streams%s, %d turns of a %s answer", w13Streams, map[bool]string{true: " and a stalled one"}[stalled],
		w13Turns, mib(w13Answer))
	path := livePath(t.ws, false, `[{"topic":"conversation","key":"`+w13Key+`"}]`, "")
	var lastRead time.Duration
	if stalled {
		t.tap.slowEnded.Store(0)
		c, err := dialLive(ctx, t.addr, path+"&bench=slow", t.hdr)
		if err == nil {
			defer c.conn.Close()
			_, err = readFrameHead(c.br) // its `ready`; then it reads nothing
		}
		if err != nil {
			r.err = "stalled stream: " + err.Error()
			return r
		}
		lastRead = sinceEpoch()
	}
	readers, closing := make([]*w13Reader, w13Streams), &atomic.Bool{}
	defer func() {
		closing.Store(true)
		for _, rd := range readers {
			if rd != nil {
				rd.c.conn.Close()
			}
		}
	}()
	for i := range readers {
		c, err := dialLive(ctx, t.addr, path, t.hdr)
		if err == nil {
			readers[i] = &w13Reader{c: c, closing: closing, seen: make(chan struct{}, 1), big: map[int]w13Expect{}}
			_, err = readFrameHead(c.br) // its `ready`
		}
		if err != nil {
			r.err = fmt.Sprintf("stream %d: %v", i, err)
			return r
		}
	}
	feed, err := conversationFeed(ctx, h.backend, t.ws)
	if err != nil {
		r.err = err.Error()
		return r
	}
	var wg sync.WaitGroup
	for _, rd := range readers {
		wg.Go(rd.read)
	}
	r.heap0 = liveHeap()
	sampling, stopSampling := context.WithCancel(ctx)
	var peak atomic.Uint64
	wg.Go(func() {
		for waitUntil(sampling, time.Now().Add(20*time.Millisecond)) {
			peak.Store(max(peak.Load(), liveHeap()))
		}
	})

	answer, seq := strings.Repeat("x", w13Answer), 0
	send := func(data string) (int, time.Duration) {
		seq++
		at := sinceEpoch()
		feed.Send(hub.FeedFrame{Kind: hub.FrameData, Cursor: "b." + strconv.Itoa(seq), Data: []byte(data)})
		return seq, at
	}
	for turn := 1; turn <= w13Turns && ctx.Err() == nil; turn++ {
		began, item := time.Now(), "assistant_message:"+strconv.Itoa(turn)
		data := chatFrame(seq+1, "item.upsert", `"item":{"id":"`+item+`","kind":"assistant_message","createdAt":0,"markdown":"`+answer+`"}`)
		for _, rd := range readers { // before it is sent: a reader may have it at once
			rd.expect(seq+1, envelopeLen(t.ws, seq+1, data))
		}
		big, at := send(data)
		for _, rd := range readers {
			rd.sent(big, at)
		}
		for k := range w13Deltas {
			waitUntil(ctx, began.Add(time.Duration(k)*time.Millisecond))
			send(chatFrame(seq+1, "item.text_delta", `"itemId":"`+item+`","delta":"`+answer[:w13Delta]+`"`))
		}
		last, _ := send(chatFrame(seq+1, "conversation.status", `"status":"completed"`))
		if !waitTurn(ctx, readers, last) {
			r.err = fmt.Sprintf("turn %d: not every fast stream had it within %s", turn, w13TurnWait)
			break
		}
		r.turns++
		waitUntil(ctx, began.Add(w13TurnGap))
	}
	if stalled {
		for end := time.Now().Add(w13StallWait); t.tap.slowEnded.Load() == 0 && time.Now().Before(end); {
			waitUntil(ctx, time.Now().Add(100*time.Millisecond))
		}
		if at := t.tap.slowEnded.Load(); at != 0 {
			r.stalledEnded = time.Duration(at) - lastRead
		}
	}
	stopSampling()
	r.heapPeak = max(peak.Load(), liveHeap())
	closing.Store(true)
	for _, rd := range readers {
		rd.c.conn.Close()
	}
	wg.Wait()
	for _, rd := range readers {
		r.lat = append(r.lat, rd.lat...)
		r.ended += b2i(rd.endedEarly)
		r.bad = append(r.bad, rd.bad...)
	}
	r.bad = r.bad[:min(len(r.bad), 4)]
	s := summarize(slices.Clone(r.lat))
	e.progress("  answer p50 %s, max %s; %d turns; %d streams ended; the stalled one ended %s after its last read%s", ms(s.P50), ms(s.Max),
		r.turns, r.ended, secs(r.stalledEnded), errNote(r.err))
	return r
}

// liveHeap is the Go heap's live bytes at the last GC.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// chatFrame is a ChatEvent of the conversation: its sequence, type and
// the fields of its type.
func chatFrame(seq int, typ, fields string) string {
	return `{"generation":"bench","sequence":` + strconv.Itoa(seq) + `,"conversationId":"` + w13Key + `","type":"` + typ + `",` + fields + `}`
}

// envelopeLen is the length of the LiveEnvelope the Hub writes for the
// data frame seq of the conversation.
func envelopeLen(ws string, seq int, data string) int {
	return len(`{"ws":"`+ws+`","topic":"conversation","key":"`+w13Key+`","cursor":"b.`+strconv.Itoa(seq)+`","event":{"kind":"data","data":`) +
		len(data) + len("}}")
}

// conversationFeed is the conversation feed of ws the Hub has open (the
// newest, which may be the previous run's, lingering).
func conversationFeed(ctx context.Context, b *fakes.Backend, ws string) (*fakes.Feed, error) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		f, err := b.WaitFeed(wctx, ws, hub.TopicConversation, w13Key, max(b.FeedOpens(ws, hub.TopicConversation, w13Key), 1))
		if err != nil {
			return nil, errors.New("the Hub opened no conversation feed")
		}
		if !f.IsClosed() {
			return f, nil
		}
		if !waitUntil(wctx, time.Now().Add(20*time.Millisecond)) {
			return nil, errors.New("the Hub's conversation feed is closed")
		}
	}
}

// waitTurn waits until every reader has read frame last, within
// w13TurnWait in all.
func waitTurn(ctx context.Context, rs []*w13Reader, last int) bool {
	timeout := time.NewTimer(w13TurnWait)
	defer timeout.Stop()
	for _, rd := range rs {
		for rd.last.Load() < int64(last) {
			select {
			case <-rd.seen:
			case <-ctx.Done():
				return false
			case <-timeout.C:
				return false
			}
		}
	}
	return true
}

// w13Reader reads one fast stream at full speed, keeping each frame's
// head and length only.
type w13Reader struct {
	c          *liveConn
	closing    *atomic.Bool // set before the benchmark closes the streams
	mu         sync.Mutex
	big        map[int]w13Expect // the big frames expected, by sequence
	lat        []time.Duration
	bad        []string
	endedEarly bool
	last       atomic.Int64 // the last sequence read
	seen       chan struct{}
}

// w13Expect is a big frame expected: its envelope's length, when it was
// sent (-1 until then) and when it was read (-1 until then).
type w13Expect struct {
	len      int
	at, read time.Duration
}

func (rd *w13Reader) expect(seq, n int) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.big[seq] = w13Expect{n, -1, -1}
}

// sent notes when big frame seq was sent, and its latency if it was read
// already.
func (rd *w13Reader) sent(seq int, at time.Duration) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	want := rd.big[seq]
	if want.at = at; want.read >= 0 {
		rd.lat = append(rd.lat, max(0, want.read-at))
	}
	rd.big[seq] = want
}

func (rd *w13Reader) read() {
	for {
		f, err := readFrameHead(rd.c.br)
		if err != nil {
			rd.endedEarly = !rd.closing.Load()
			return
		}
		if f.comment {
			continue
		}
		cur, kind := string(jsonString(f.head, "cursor")), string(jsonString(f.head, "kind"))
		seq, _ := strconv.Atoi(strings.TrimPrefix(cur, "b."))
		now := sinceEpoch()
		rd.mu.Lock()
		switch want, isBig := rd.big[seq]; {
		case kind != "data" || int64(seq) != rd.last.Load()+1:
			rd.bad = append(rd.bad, fmt.Sprintf("%s %q after b.%d", kind, cur, rd.last.Load()))
		case isBig && (f.n != want.len || !f.closed):
			rd.bad = append(rd.bad, fmt.Sprintf("b.%d: %d bytes of %d", seq, f.n, want.len))
		case isBig && want.at < 0:
			want.read = now
			rd.big[seq] = want
		case isBig:
			rd.lat = append(rd.lat, now-want.at)
		}
		rd.mu.Unlock()
		if kind == "data" {
			rd.last.Store(int64(seq))
		}
		select {
		case rd.seen <- struct{}{}:
		default:
		}
	}
}

// frameHead is what readFrameHead keeps of a frame: whether it is a
// comment, the first 512 bytes of its data, the data's length and whether
// the data ends as an envelope does ("}}").
type frameHead struct {
	comment, closed bool
	head            []byte
	n               int
}

// readFrameHead reads one frame up to its blank line without keeping its
// data, however long.
func readFrameHead(br *bufio.Reader) (frameHead, error) {
	var f frameHead
	for seen := false; ; {
		line, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !full {
			return f, err
		}
		if !full && len(line) == 1 { // a blank line
			if seen {
				return f, nil
			}
			continue
		}
		seen = true
		isData := bytes.HasPrefix(line, []byte("data: "))
		f.comment = f.comment || line[0] == ':'
		if isData {
			line = line[len("data: "):]
		}
		var tail [2]byte
		for {
			chunk := line
			if !full {
				chunk = chunk[:len(chunk)-1]
			}
			if isData {
				f.head = append(f.head, chunk[:min(len(chunk), max(0, 512-len(f.head)))]...)
				f.n += len(chunk)
				for _, c := range chunk[max(0, len(chunk)-2):] {
					tail[0], tail[1] = tail[1], c
				}
			}
			if !full {
				break
			}
			if line, err = br.ReadSlice('\n'); err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return f, err
			}
			full = err != nil
		}
		if isData {
			f.closed = f.n >= 2 && tail == [2]byte{'}', '}'}
		}
	}
}

func w13Verdicts(base, with *w13Run) []verdict {
	b, w := summarize(slices.Clone(base.lat)), summarize(slices.Clone(with.lat))
	want := w13Streams * w13Turns
	delivered := func(r *w13Run) bool {
		return r.err == "" && r.turns == w13Turns && len(r.lat) == want && r.ended == 0 && len(r.bad) == 0
	}
	delivery := func(r *w13Run) string {
		return fmt.Sprintf("%d/%d answers of %s read whole (%d of %d turns had by every stream), %d streams ended early, %d frames "+
			"missing, cut or out of order%s%s", len(r.lat), want, mib(w13Answer), r.turns, w13Turns, r.ended, len(r.bad),
			map[bool]string{true: " (" + strings.Join(r.bad, "; ") + ")"}[len(r.bad) > 0], errNote(r.err))
	}
	limit := time.Duration(w13MaxRatio * float64(b.P50))
	return []verdict{
		{"W13 16 MiB answers, 10 fast streams", delivery(base), "every answer to every stream, whole and in order; no stream ended", delivered(base)},
		{"W13 the same beside a stalled stream", delivery(with), "every answer to every stream, whole and in order; no stream ended", delivered(with)},
		{"W13 answer latency beside the stalled stream", fmt.Sprintf("p50 %s, max %s = %.2f × the baseline's p50 %s (max %s)", ms(w.P50), ms(w.Max),
			ratio(float64(w.P50), float64(b.P50)), ms(b.P50), ms(b.Max)), fmt.Sprintf("p50 ≤ %.2f × the baseline's (%s)", w13MaxRatio, ms(limit)),
			b.N > 0 && w.N > 0 && w.P50 <= limit},
		{"W13 the stalled stream", fmt.Sprintf("the Hub ended it (its handler returned) %s after its last read; peak live heap %s "+
			"(baseline %s; %s before the turns)%s", secs(with.stalledEnded), mib(with.heapPeak), mib(base.heapPeak), mib(with.heap0), errNote(with.err)),
			fmt.Sprintf("ended within %s of its last read", secs(w13StallWait)), with.err == "" && with.stalledEnded >= 0 && with.stalledEnded <= w13StallWait},
	}
}
