package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/adapters/web"
)

// ackRecorder stands in for the Hub's acknowledgement route
// (hubAcknowledgeNotification): it keeps what each request said.
type ackRecorder struct {
	mu   sync.Mutex
	acks []ack
	got  chan struct{} // one per acknowledgement
}

type ack struct {
	Device, ID string
	Site       string // Sec-Fetch-Site
	Type       string // Content-Type
}

func (r *ackRecorder) all() []ack {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ack(nil), r.acks...)
}

// next waits for one more acknowledgement, failing the test after wait.
func (r *ackRecorder) next(t *testing.T) {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(wait):
		t.Fatalf("no acknowledgement within %v; got %+v", wait, r.all())
	}
}

// workerServer serves the dashboard as the Hub does, with a test double
// of the acknowledgement route and 401 for every other API route: the
// service worker's part of push needs nothing else of a Hub. (Settings'
// tests run the whole round trip against a real Hub.)
func workerServer(t *testing.T) (*httptest.Server, *ackRecorder) {
	t.Helper()
	rec := &ackRecorder{got: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	mux.Handle("/", web.NewHandler())
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"sign in first"}`)
	})
	mux.HandleFunc("POST /api/hub/notifications/acknowledgements", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Device string `json:"device"`
			ID     string `json:"id"`
		}
		dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.acks = append(rec.acks, ack{Device: body.Device, ID: body.ID, Site: r.Header.Get("Sec-Fetch-Site"), Type: r.Header.Get("Content-Type")})
		rec.mu.Unlock()
		rec.got <- struct{}{}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"acknowledged":true}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, rec
}

// shown is a notification the service worker's registration shows.
type shown struct {
	Title, Body, Tag, URL, Icon string
}

// notificationsWhen waits, for at most timeout (wait when none is given),
// until the notifications the page's service worker shows satisfy cond (a
// JavaScript expression over `ns`, an array of {title, body, tag, url,
// icon}), and returns them.
func notificationsWhen(t *testing.T, p *browsertest.Page, cond string, timeout ...time.Duration) []shown {
	t.Helper()
	limit := wait
	if len(timeout) > 0 {
		limit = timeout[0]
	}
	ns, err := browsertest.Eval[[]shown](p, fmt.Sprintf(`(async () => {
  const reg = await navigator.serviceWorker.ready;
  const deadline = Date.now() + %d;
  for (;;) {
    const ns = (await reg.getNotifications()).map((n) => ({title: n.title, body: n.body, tag: n.tag, url: (n.data || {}).url || '', icon: n.icon}));
    if ((%s) || Date.now() > deadline) return ns;
    await new Promise((r) => setTimeout(r, 50));
  }
})()`, limit.Milliseconds(), cond))
	must(t, err)
	return ns
}

// payload is a PushPayload (api/openapi.yaml) as the Hub sends it.
func payload(id, device, title, body, url string) string {
	b, _ := json.Marshal(map[string]any{"version": 1, "id": id, "device": device, "kind": "turn-completed",
		"title": title, "body": body, "url": url, "createdAt": "2025-05-01T10:00:00Z"})
	return string(b)
}

// The dashboard's service worker registers at the root scope and shows
// each push message as exactly the notification its payload describes,
// then acknowledges it to the Hub with the payload's device and id; the
// same message twice replaces its notification. A message that is no
// PushPayload (not JSON, another shape, an address off the dashboard, no
// data at all) still shows a notification, a generic one, and is not
// acknowledged. Messages reach the worker through DevTools, as a push
// service's would once the browser decrypted it.
func TestBrowserServiceWorkerShowsAndAcknowledgesEachPush(t *testing.T) {
	is := is.New(t)
	needBrowser(t)
	srv, rec := workerServer(t)
	origin := srv.URL
	p := openPage(t, browsertest.Desktop)
	must(t, p.SetPermission(origin, "notifications", true))
	workers, err := p.WatchWorkers()
	must(t, err)
	must(t, p.Go(origin+"/login"))

	// The dashboard's own registration (the module the app runs).
	scope, err := browsertest.Eval[string](p, `import(document.querySelector('link[rel=modulepreload][href*="/notify/push."]').href)
  .then((m) => m.registerWorker()).then((reg) => reg.scope)`)
	must(t, err)
	is.Equal(scope, origin+"/") // the root scope
	reg, err := workers.Active(origin+"/", wait)
	must(t, err)

	first, second := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	must(t, workers.DeliverPush(origin, reg, payload(first, "dev-7", "Website", "Agent turn finished", "/w/web-1/c/agent%3A1")))
	rec.next(t)
	ns := notificationsWhen(t, p, `ns.length === 1`)
	is.Equal(len(ns), 1)                                                                                        // one notification
	is.Equal(ns[0].Title, "Website")                                                                            // the payload's title
	is.Equal(ns[0].Body, "Agent turn finished")                                                                 // its body
	is.Equal(ns[0].Tag, first)                                                                                  // tagged with its id
	is.Equal(ns[0].URL, "/w/web-1/c/agent%3A1")                                                                 // the page to open
	is.True(strings.HasPrefix(ns[0].Icon, origin+"/assets/icon-192.") && strings.HasSuffix(ns[0].Icon, ".png")) // Wharf's icon
	is.Equal(rec.all(), []ack{{Device: "dev-7", ID: first, Site: "same-origin", Type: "application/json"}})     // acknowledged, from the origin

	// The same message again (a push service may deliver twice): it
	// replaces its notification.
	must(t, workers.DeliverPush(origin, reg, payload(first, "dev-7", "Website", "Agent turn finished", "/w/web-1/c/agent%3A1")))
	rec.next(t) // acknowledged once shown
	ns = notificationsWhen(t, p, `true`)
	is.Equal(len(ns), 1) // still one

	// Garbage: each shows the generic notification, which replaces the
	// last generic one; none is acknowledged.
	for _, data := range []string{
		`not json at all`,
		`{"title":"Only a title"}`,
		``,
		payload(strings.Repeat("c3", 32), "dev-7", "Elsewhere", "Agent turn finished", "//attacker.example/"),
		payload(strings.Repeat("c3", 32), "dev-7", "Elsewhere", "Agent turn finished", "https://attacker.example/"),
		payload("not-hex", "dev-7", "Bad id", "Agent turn finished", "/"),
		`["a list"]`,
		`null`,
	} {
		must(t, workers.DeliverPush(origin, reg, data))
		ns = notificationsWhen(t, p, `ns.length === 2 && ns.some((n) => n.tag === 'wharf')`)
		is.Equal(len(ns), 2) // the first and the generic one
		var generic shown
		for _, n := range ns {
			if n.Tag == "wharf" {
				generic = n
			}
		}
		is.Equal(generic.Title, "Wharf")                                                                                                     // generic
		is.Equal(generic.URL, "/")                                                                                                           // opens the dashboard
		is.True(!strings.Contains(generic.Title+generic.Body, "Elsewhere") && !strings.Contains(generic.Title+generic.Body, "Only a title")) // nothing of the garbage
	}

	// A second message: its own notification, and the only other
	// acknowledgement.
	must(t, workers.DeliverPush(origin, reg, payload(second, "dev-7", "API", "An agent needs your answer", "/w/api")))
	rec.next(t)
	ns = notificationsWhen(t, p, `ns.length === 3`)
	is.Equal(len(ns), 3) // the first, the generic and the second
	is.Equal(rec.all(), []ack{
		{Device: "dev-7", ID: first, Site: "same-origin", Type: "application/json"},
		{Device: "dev-7", ID: first, Site: "same-origin", Type: "application/json"},
		{Device: "dev-7", ID: second, Site: "same-origin", Type: "application/json"},
	}) // never one for garbage
}

// The page's Trusted Types allow one policy, push.js's, which the
// dashboard made when it started: no script can make another or make it
// again, and no string reaches the script-URL sink that registers a
// service worker, so the only worker a script of the page can register is
// /sw.js.
func TestBrowserOnlyTheServiceWorkerPassesTrustedTypes(t *testing.T) {
	is := is.New(t)
	needBrowser(t)
	srv, _ := workerServer(t)
	p := openPage(t, browsertest.Desktop)
	must(t, p.Go(srv.URL+"/login"))
	for _, tc := range []struct{ what, js string }{
		{"another policy", `trustedTypes.createPolicy('mine', {createScriptURL: (u) => u})`},
		{"the worker policy again", `trustedTypes.createPolicy('wharf-worker', {createScriptURL: (u) => u})`},
		{"a string as the worker", `navigator.serviceWorker.register('/assets/app.js')`},
	} {
		got, err := browsertest.Eval[string](p, `(async () => { try { await `+tc.js+`; return 'allowed'; } catch (e) { return e.name; } })()`)
		must(t, err)
		is.Equal(got, "TypeError") // refused: tc.what
	}
}
