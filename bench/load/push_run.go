package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// W16's runs (push.go): one side's notices on the schedule, its messages
// matched to them at the fake push service, and the baseline's sender.

// w16Measure announces w16Events events with announce, one every w16Pace
// (event k on workspace k mod w16Workspaces), after a warm-up event on
// workspace 0 whose messages it waits for and does not count; then it
// waits for every message, w16Drain after the last event at most, and
// reads those that arrived.
func w16Measure(ctx context.Context, svc *pushservice.Service, devices []w16Device, byWS [][]int, label string, announce func(w16Event)) (w16Run, error) {
	var r w16Run
	refused0, n0 := len(svc.Failures()), len(svc.Messages())
	announce(w16Event{ws: 0, conv: "bench:" + label + "-warm", at: time.Now()}) // the connection, the token
	wctx, cancel := context.WithTimeout(ctx, w16Drain)
	_, err := svc.Wait(wctx, n0+len(byWS[0]))
	if cancel(); err != nil {
		return r, fmt.Errorf("%s: the warm-up's messages did not arrive: %w", label, err)
	}
	n0 += len(byWS[0])

	total, events := 0, make([]w16Event, w16Events)
	for k := range events {
		events[k] = w16Event{ws: k % w16Workspaces, conv: fmt.Sprintf("bench:%s-%d", label, k)}
		total += len(byWS[events[k].ws])
	}
	m0 := mark()
	start := time.Now().Add(50 * time.Millisecond)
	for k := range events {
		if !waitUntil(ctx, start.Add(time.Duration(k)*w16Pace)) {
			return r, ctx.Err()
		}
		events[k].at = time.Now()
		announce(events[k])
	}
	wctx, cancel = context.WithDeadline(ctx, events[len(events)-1].at.Add(w16Drain))
	msgs, err := svc.Wait(wctx, n0+total)
	if cancel(); err != nil && ctx.Err() != nil {
		return r, ctx.Err()
	} else if err != nil { // what arrived within the drain; the rest counts as never
		msgs = svc.Messages()
	}
	m1 := mark()
	var run run
	run.fill(m0, m1, 0)
	r.cpu, r.others, r.window = run.Server, run.Others, m1.at.Sub(m0.at)
	r.refused = len(svc.Failures()) - refused0

	// Every message: its event (the conversation in its URL) and device.
	bySub := map[string]int{}
	for i, d := range devices {
		bySub[svc.ID(d.sub)] = i
	}
	byConv := map[string]int{}
	for k, ev := range events {
		byConv[ev.conv] = k
	}
	seen := map[[2]int]int{}
	var lats []time.Duration
	var last time.Time
	for _, m := range msgs[n0:] {
		var p notify.Payload
		_ = json.Unmarshal(m.Payload, &p)
		_, c, _ := strings.Cut(p.URL, "/c/")
		conv, _ := url.PathUnescape(c)
		k, okEv := byConv[conv]
		i, okDev := bySub[m.Subscription]
		if !okEv || !okDev || devices[i].id != p.Device || !slices.Contains(devices[i].covers, events[k].ws) {
			r.unexpected++
			continue
		}
		if seen[[2]int{k, i}]++; seen[[2]int{k, i}] > 1 {
			r.twice++
			continue
		}
		lats, last = append(lats, m.At.Sub(events[k].at)), m.At
	}
	r.messages, r.missing, r.span = len(lats), total-len(lats), last.Sub(events[0].at)
	for range r.missing { // a message that never came is slower than any that did
		lats = append(lats, w16Never)
	}
	r.lat = summarize(lats)
	return r, nil
}

// w16Covers is the workspaces device i covers: w16Cover of them, every
// workspace covered by w16Devices × w16Cover / w16Workspaces devices, and
// the first w16Workspaces / w16Cover devices covering every workspace
// between them (the enrollment relies on it).
func w16Covers(i int) []int {
	covers := make([]int, w16Cover)
	for k := range covers {
		covers[k] = (i + i/w16Workspaces + k*(w16Workspaces/w16Cover)) % w16Workspaces
	}
	return covers
}

// w16Never is the latency of a message that did not arrive.
const w16Never = time.Duration(math.MaxInt64)

// msNever is ms, or "never" for w16Never.
func msNever(d time.Duration) string {
	if d == w16Never {
		return fmt.Sprintf("never (not within %s of the last event)", w16Drain)
	}
	return ms(d)
}

// w16Bare is the baseline's sender: the bare Pusher sending from
// notify.MaxSends workers, in the order the messages were queued.
type w16Bare struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func newW16Bare() *w16Bare {
	b := &w16Bare{jobs: make(chan func(), (w16Events+1)*w16Devices)}
	for range notify.MaxSends {
		b.wg.Go(func() {
			for f := range b.jobs {
				f()
			}
		})
	}
	return b
}

// stop ends the workers once every queued message is sent.
func (b *w16Bare) stop() { close(b.jobs); b.wg.Wait() }

// queue queues ev's messages to the devices covering its workspace, with
// the payloads the Hub would send them.
func (b *w16Bare) queue(ctx context.Context, p *webpush.Pusher, devices []w16Device, byWS [][]int, ids, names []string, ev w16Event) {
	n := hub.Notification{ConversationID: ev.conv, Kind: hub.NotifyTurnCompleted, CreatedAt: ev.at}
	for _, i := range byWS[ev.ws] {
		d := hub.PushDelivery{Key: hub.PushDeliveryKey{WorkspaceID: ids[ev.ws], DeviceID: devices[i].id, NotificationID: ev.conv}, Notification: n}
		payload, _ := json.Marshal(notify.PayloadOf(d, names[ev.ws]))
		msg, sub := hub.PushMessage{Payload: payload, TTL: notify.MaxTTL, Urgency: "normal", Topic: notify.PayloadID(d.Key)[:32]}, devices[i].sub
		b.jobs <- func() { _, _ = p.Push(ctx, sub, msg) }
	}
}
