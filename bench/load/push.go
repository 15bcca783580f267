package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
	"github.com/wharfhub/wharf/hub/service"
)

// W16: Web Push notifications at the scale. A Wharf built by
// daemon.Open as `wharf serve --push-contact … --push-ca-file …
// --push-host …` builds it (the real Pusher), over fake sessions
// (fakes.Backend) whose notification feeds the benchmark announces on,
// sending to the fake push service (fakes/pushservice: HTTPS/2 on
// loopback, every VAPID token verified and every message decrypted):
//   - 100 registered, started workspaces; 40 users with 25 devices each,
//     each device its own login and its own subscription, enrolled over
//     HTTP for both categories on 10 workspaces, so that every workspace
//     is covered by exactly 100 devices;
//   - the Hub's clock (a fakes.Clock) is moved past the 30 s start
//     window, and no user has a live stream open: everyone is away, so a
//     completed turn is sent at once;
//   - w16Events turn-completed notices, one every w16Pace, round-robin
//     over the workspaces: each goes to its 100 devices. Latency is from
//     the announcement to the push service's receipt of each message (one
//     process, one clock);
//   - the baseline, on the same schedule just before: a bare Pusher
//     (webpush.New, its own key, the same service) sending the same
//     payloads to the same subscriptions from notify.MaxSends workers;
//   - CPU per message: the process's CPU (getrusage) from the first event
//     to the last message, over the messages; it includes the fake
//     service's verification and decryption, as the baseline's does.
//     BenchmarkEncrypt (adapters/webpush) gives the encryption alone;
//   - the Hub's heap per device: the Go heap after a collection with every
//     login made and no device, then with the 1,000 devices enrolled (and
//     the observers of their workspaces running).

const (
	w16Workspaces    = 100
	w16Users         = 40
	w16DevicesOfUser = 25 // at most notify.MaxDevicesOfUser
	w16Devices       = w16Users * w16DevicesOfUser
	w16Cover         = 10 // workspaces a device covers: w16Devices × w16Cover / w16Workspaces devices a workspace
	w16Events        = 60
	w16Pace          = time.Second
	w16Workers       = 4 // logins and enrollments at once (the Hub hashes passwords on as many CPUs)
	w16MaxP99        = time.Second
	w16Drain         = 30 * time.Second // after the last event, for its messages
	w16Limit         = 10 * time.Minute
	w16Contact       = "mailto:bench@example.com"
)

// w16Password is the cost of the users' password hashes: a token one, as
// the 1,000 logins are the setup, not what is measured.
var w16Password = service.PasswordParams{Memory: 64, Time: 1, Threads: 1}

// w16Device is one enrolled phone: its login, its subscription at the fake
// service and the workspaces it covers.
type w16Device struct {
	user, session, id string
	sub               hub.PushSubscription
	covers            []int
}

// w16Event is one announced turn-completed notice.
type w16Event struct {
	ws   int
	conv string
	at   time.Time // when it was announced (the baseline: queued)
}

// w16Run is what one side's run measured.
type w16Run struct {
	lat                      summary // missing messages count as w16Never
	messages, missing, twice int
	unexpected, refused      int
	cpu                      time.Duration // the process's, over the run
	others                   float64
	window                   time.Duration // of the CPU figure: the first event to the last message (or the drain's end)
	span                     time.Duration // the first event to the last message that arrived
}

func (r w16Run) perMessage() time.Duration { return r.cpu / time.Duration(max(1, r.messages)) }

func runW16(ctx context.Context, e *env) ([]verdict, error) {
	svc, err := pushservice.Start(pushservice.Options{})
	if err != nil {
		return nil, err
	}
	e.onClose(svc.Close)
	root, err := mkTemp(e, "wharf-bench-w16-")
	if err != nil {
		return nil, err
	}
	ca := filepath.Join(root, "push-ca.pem")
	if err := os.WriteFile(ca, svc.CAPEM(), 0o600); err != nil {
		return nil, err
	}
	clock, backend := fakes.NewClock(time.Now()), fakes.NewBackend()
	w, err := e.openWharf(ctx, func(p *service.Ports) { p.Backend, p.Clock = backend, clock }, nil, func(c *daemon.Config) {
		c.PushContact, c.PushCAFile, c.Hub.PushHosts = w16Contact, ca, []string{svc.Host()}
		c.Hub.Password = w16Password
	})
	if err != nil {
		return nil, err
	}
	var st struct {
		Configured bool
		PublicKey  string
	}
	if _, _, _, err := call(ctx, w.addr, http.MethodGet, "/api/hub/notifications", bearer(w.session), nil, &st); err != nil {
		return nil, err
	}
	hubKey, err := base64.RawURLEncoding.DecodeString(st.PublicKey)
	if err != nil || !st.Configured {
		return nil, fmt.Errorf("the Hub's push is not configured (%v)", err)
	}
	svc.SetVAPIDPublicKey(hubKey)

	e.progress("W16: registering and starting %d workspaces", w16Workspaces)
	dirs := make([]string, w16Workspaces)
	for i := range dirs {
		if dirs[i] = filepath.Join(root, fmt.Sprintf("ws%03d", i)); os.Mkdir(dirs[i], 0o700) != nil {
			return nil, fmt.Errorf("mkdir %s", dirs[i])
		}
	}
	ids, err := w.register(ctx, dirs...)
	for _, id := range ids {
		if err == nil {
			err = w.lifecycle(ctx, id, "start")
		}
	}
	if err != nil {
		return nil, err
	}

	e.progress("W16: %d users, %d logins", w16Users, w16Devices)
	devices := make([]w16Device, w16Devices)
	for i := range devices {
		d := &devices[i]
		d.user, d.sub, d.covers = fmt.Sprintf("phone%02d", i/w16DevicesOfUser), svc.NewSubscription(), w16Covers(i)
	}
	for u := range w16Users {
		if err := w.d.Hub().AddUser(ctx, devices[u*w16DevicesOfUser].user, benchPassword); err != nil {
			return nil, err
		}
	}
	if err := w16Each(ctx, w16Devices, w16Workers, func(i int) (err error) {
		devices[i].session, err = w16Login(ctx, w.addr, devices[i].user, fmt.Sprintf("phone %d", i))
		return err
	}); err != nil {
		return nil, err
	}
	before := heapLive()
	mem0 := takeMem()

	e.progress("W16: enrolling %d devices", w16Devices)
	t0 := time.Now()
	// The first devices, which cover every workspace between them, one at
	// a time: the Hub wants an observer only for a workspace a committed
	// device covers (or the enrollment under way), so two first
	// enrollments at once may end each other's observer before it caught
	// up, and the enrollment then waits its 3 s on the Hub's clock, which
	// does not move here. Once every workspace is covered, four at once.
	first := w16Workspaces / w16Cover
	if err := w16Each(ctx, first, 1, func(i int) error { return w16Enroll(ctx, w.addr, &devices[i], ids) }); err != nil {
		return nil, err
	}
	if err := w16Each(ctx, w16Devices-first, w16Workers, func(i int) error { return w16Enroll(ctx, w.addr, &devices[first+i], ids) }); err != nil {
		return nil, err
	}
	enrolling := time.Since(t0)
	after := heapLive()
	mem1 := takeMem()

	// Everyone away: past the Hub's start window, no live stream.
	clock.Advance(notify.RecentWindow + time.Second)
	byWS := make([][]int, w16Workspaces)
	for i, d := range devices {
		for _, ws := range d.covers {
			byWS[ws] = append(byWS[ws], i)
		}
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(d)
	}

	// The baseline: the bare Pusher, its own key, the same subscriptions.
	bare, err := webpush.New(webpush.Options{KeyFile: filepath.Join(root, "bare.key"), Contact: w16Contact, Client: svc.Client()})
	if err != nil {
		return nil, err
	}
	svc.SetVAPIDPublicKey(bare.PublicKey())
	e.progress("W16: the bare Pusher, %d events × %d devices, one every %s", w16Events, len(byWS[0]), w16Pace)
	sender := newW16Bare()
	base, err := w16Measure(ctx, svc, devices, byWS, "bare", func(ev w16Event) { sender.queue(ctx, bare, devices, byWS, ids, names, ev) })
	sender.stop()
	if err != nil {
		return nil, err
	}
	svc.SetVAPIDPublicKey(hubKey)
	e.progress("W16: Wharf, %d events × %d devices, one every %s", w16Events, len(byWS[0]), w16Pace)
	got, err := w16Measure(ctx, svc, devices, byWS, "wharf", func(ev w16Event) {
		backend.Notify(ids[ev.ws], fakes.Notice(ev.conv, hub.NotifyTurnCompleted, "turn", clock.Now()))
	})
	if err != nil {
		return nil, err
	}
	encrypt := w16EncryptBench(ctx)

	fanout, sent := len(byWS[0]), func(r w16Run) string {
		return fmt.Sprintf("%d of %d in %s (%.0f a second)", r.messages, w16Events*len(byWS[0]), r.span.Round(time.Millisecond),
			float64(r.messages)/max(r.span.Seconds(), 1e-9))
	}
	perDevice := float64(int64(after)-int64(before)) / w16Devices
	return []verdict{
		{fmt.Sprintf("W16 turn completed → push service, p99 (%d devices over %d workspaces, user away)", w16Devices, w16Workspaces),
			fmt.Sprintf("%s over %d messages (p50 %s, max %s; %d events one every %s, each to its %d devices); the bare Pusher on the same schedule: p99 %s (p50 %s)%s",
				msNever(got.lat.P99), got.lat.N, msNever(got.lat.P50), msNever(got.lat.Max), w16Events, w16Pace, fanout,
				msNever(base.lat.P99), msNever(base.lat.P50), w16Others(got, base)),
			"≤ " + ms(w16MaxP99) + " (absolute)", got.lat.P99 <= w16MaxP99},
		{"W16 messages at the push service", fmt.Sprintf("%s; %d twice, %d unexpected, %d refused by the service (the bare Pusher: %s)",
			sent(got), got.twice, got.unexpected, got.refused, sent(base)),
			"each (event, covering device) once", got.missing == 0 && got.twice == 0 && got.unexpected == 0 && got.refused == 0},
		{"W16 CPU per encrypted message", fmt.Sprintf("%s (the process's %s over %s: the Hub, its Pusher, the fake service's verification and decryption); the bare Pusher: %s (%.2f × it); the encryption alone (BenchmarkEncrypt): %s",
			us(got.perMessage()), got.cpu.Round(time.Millisecond), got.window.Round(time.Millisecond), us(base.perMessage()),
			ratio(float64(got.perMessage()), float64(base.perMessage())), encrypt),
			reported, true},
		{"W16 Hub heap per enrolled device", fmt.Sprintf("%s (Go heap after a GC: %s with %d logins and no device, %s with the %d devices enrolled, in %s; VmRSS %+.1f MiB; the servers' goroutines %+d)",
			kb(perDevice), mib(before), w16Devices, mib(after), w16Devices, enrolling.Round(time.Millisecond),
			float64(mem1.rss-mem0.rss)/(1<<20), mem1.servers-mem0.servers),
			reported, true},
	}, nil
}

// w16Others is the note of other processes' share of the machine during
// Wharf's run and the baseline's.
func w16Others(wharf, bare w16Run) string {
	return fmt.Sprintf("; other processes took %s of the machine (during the bare run %s)", pct(wharf.others), pct(bare.others))
}

// w16Each runs f(0..n-1) from workers goroutines; the first error
// stops it.
func w16Each(ctx context.Context, n, workers int, f func(i int) error) error {
	var (
		mu   sync.Mutex
		next int
		errs []error
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				stop := i >= n || len(errs) > 0
				mu.Unlock()
				if stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// w16Login logs user in as a new device: its bearer session.
func w16Login(ctx context.Context, addr, user, label string) (string, error) {
	var out struct{ SessionID string }
	_, _, _, err := call(ctx, addr, http.MethodPost, "/login", http.Header{"Origin": {"http://" + addr}, "Sec-Fetch-Site": {"same-origin"}},
		map[string]string{"name": user, "password": benchPassword, "deviceLabel": label}, &out)
	if err == nil && out.SessionID == "" {
		err = errors.New("login: no session")
	}
	return out.SessionID, err
}

// w16Enroll enrolls d over HTTP, as the dashboard does, on its workspaces.
func w16Enroll(ctx context.Context, addr string, d *w16Device, ids []string) error {
	covered := make([]string, len(d.covers))
	for j, ws := range d.covers {
		covered[j] = ids[ws]
	}
	body := map[string]any{
		"subscription": map[string]any{"endpoint": d.sub.Endpoint, "expirationTime": nil, "keys": map[string]string{
			"p256dh": base64.RawURLEncoding.EncodeToString(d.sub.P256DH), "auth": base64.RawURLEncoding.EncodeToString(d.sub.Auth)}},
		"workspaceIds": covered, "allWorkspaces": false, "needsAnswer": true, "completed": true,
	}
	var out struct{ Device struct{ ID string } }
	if _, _, _, err := call(ctx, addr, http.MethodPut, "/api/hub/notifications", bearer(d.session), body, &out); err != nil {
		return err
	}
	if d.id = out.Device.ID; d.id == "" {
		return errors.New("enrollment: no device id")
	}
	return nil
}

// heapLive is the Go heap's live bytes after a collection.
func heapLive() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

var nsPerOp = regexp.MustCompile(`BenchmarkEncrypt\S*\s+\d+\s+([\d.]+) ns/op`)

// w16EncryptBench runs adapters/webpush's BenchmarkEncrypt (one message's
// encryption alone) and returns its time per message, or why not.
func w16EncryptBench(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkEncrypt$", "-benchtime", "2s", "./adapters/webpush").CombinedOutput()
	m := nsPerOp.FindSubmatch(out)
	if err != nil || m == nil {
		return fmt.Sprintf("not measured (%v)", err)
	}
	ns, _ := strconv.ParseFloat(string(m[1]), 64)
	return us(time.Duration(ns))
}
