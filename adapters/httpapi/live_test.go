package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/service"
)

// sseFrame is one frame of an event stream: a comment, or an event with
// its data.
type sseFrame struct {
	comment     string
	event, data string
}

// liveStream is an open live stream read in the background.
type liveStream struct {
	t      *testing.T
	resp   *http.Response
	frames chan sseFrame
	id     string
}

// openLive opens GET /api/hub/live with query and headers, checks the
// response's headers and its opening (`: open` then one hello) against the
// contract, and reads the rest in the background. Every frame is checked:
// only hello and live events, only the open and keepalive comments, each
// event's data valid against its schema.
func (s *testServer) openLive(t *testing.T, query string, headers ...string) *liveStream {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api/hub/live?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	// The contract transport reads whole bodies; a stream never ends, so
	// it is checked frame by frame here instead.
	resp, err := s.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("live stream: %d %s", resp.StatusCode, b)
	}
	for name, want := range map[string]string{
		"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store, no-transform", "X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("live stream %s %q, want %q", name, got, want)
		}
	}
	l := &liveStream{t: t, resp: resp, frames: make(chan sseFrame, 1024)}
	go readSSE(t, resp.Body, l.frames)
	if f := l.next(); f.comment != "open" {
		t.Fatalf("first frame %+v, want the open comment", f)
	}
	hello := l.next()
	if hello.event != "hello" {
		t.Fatalf("second frame %+v, want hello", hello)
	}
	var h struct{ StreamID string }
	json.Unmarshal([]byte(hello.data), &h)
	l.id = h.StreamID
	validated.Lock()
	validated.ops["hubStreamLive"] = true
	validated.Unlock()
	return l
}

// readSSE parses frames from r until it ends, checking each.
func readSSE(t *testing.T, r io.Reader, out chan<- sseFrame) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	var f sseFrame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if msg := checkFrame(f); msg != "" {
				t.Errorf("live stream frame %+v: %s", f, msg)
			}
			out <- f
			f = sseFrame{}
		case strings.HasPrefix(line, ": "):
			f.comment = line[2:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		default:
			t.Errorf("live stream line %q is not one the Hub writes", line)
		}
	}
}

// checkFrame says why f breaks the contract, or "".
func checkFrame(f sseFrame) string {
	switch {
	case f.comment != "":
		if f.event != "" || (f.comment != "open" && f.comment != "keepalive") {
			return "unknown comment frame"
		}
		return ""
	case f.event == "hello":
		return checkSchema("LiveHello", f.data)
	case f.event == "live":
		return checkSchema("LiveEnvelope", f.data)
	}
	return "unknown event " + f.event
}

// checkSchema validates data against a named schema of the contract.
func checkSchema(name, data string) string {
	doc, err := contract()
	if err != nil {
		return err.Error()
	}
	ref := doc.Components.Schemas[name]
	if ref == nil {
		return "no schema " + name
	}
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return err.Error()
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return err.Error()
	}
	return ""
}

// envelope is a live envelope as the tests read it.
type envelope struct {
	WS, Topic string
	Key       *string
	Cursor    string
	Event     struct {
		Kind string
		Data json.RawMessage
	}
}

// next returns the next frame, failing the test after a bounded wait.
func (l *liveStream) next() sseFrame {
	l.t.Helper()
	select {
	case f, ok := <-l.frames:
		if !ok {
			l.t.Fatal("the live stream ended")
		}
		return f
	case <-time.After(10 * time.Second):
		l.t.Fatal("no frame within 10 s")
	}
	return sseFrame{}
}

// envelopes returns the next n envelopes, skipping keepalives.
func (l *liveStream) envelopes(n int) []envelope {
	l.t.Helper()
	var out []envelope
	for len(out) < n {
		f := l.next()
		if f.comment != "" {
			continue
		}
		var e envelope
		if err := json.Unmarshal([]byte(f.data), &e); err != nil {
			l.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// ended reports whether the stream ends within a bounded wait, skipping
// whatever it still writes.
func (l *liveStream) ended() bool {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-l.frames:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func subsQuery(ws, subs string) string {
	return "ws=" + url.QueryEscape(ws) + "&subs=" + url.QueryEscape(subs)
}

func TestLiveStreamChecksBeforeTheFirstByte(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	id := s.login(t, "ann", annPassword)
	auth := bearer(id)
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app"}`, auth...)
	cookie := []string{"Cookie", s.cookieName() + "=" + id}
	tests := []struct {
		name    string
		query   string
		headers []string
		status  int
		msg     string
	}{
		{"no session", "ws=app", nil, 401, ""},
		{"cookie from another origin", "ws=app", append(cookie, "Origin", "https://evil.example"), 403, "cross-origin request rejected"},
		{"cookie from a cross-site fetch", "ws=app", append(cookie, "Sec-Fetch-Site", "cross-site"), 403, "cross-origin request rejected"},
		{"ws absent", "activity=1", auth, 400, "workspace id required"},
		{"ws empty", "ws=", auth, 400, "invalid workspace id"},
		{"ws over 256 bytes", "ws=" + strings.Repeat("a", 257), auth, 400, "invalid workspace id"},
		{"subs not JSON", subsQuery("app", "[{"), auth, 400, "subs must be a JSON array"},
		{"subs not an array", subsQuery("app", `{"topic":"inventory"}`), auth, 400, "expected an array of subscriptions"},
		{"17 subscriptions", subsQuery("app", "["+strings.Repeat(`1,`, 16)+"1]"), auth, 400, "too many subscriptions"},
		{"entry not an object", subsQuery("app", `[1]`), auth, 400, "subscription must be an object"},
		{"activity subscribed", subsQuery("app", `[{"topic":"activity"}]`), auth, 400, "subscription topic must be document, inventory, conversation, or worktrees"},
		{"topic not a string", subsQuery("app", `[{"topic":3}]`), auth, 400, "subscription topic must be document, inventory, conversation, or worktrees"},
		{"no topic", subsQuery("app", `[{"key":"k"}]`), auth, 400, "subscription topic must be document, inventory, conversation, or worktrees"},
		{"conversation without key", subsQuery("app", `[{"topic":"conversation"}]`), auth, 400, "conversation subscription needs a key"},
		{"inventory with key", subsQuery("app", `[{"topic":"inventory","key":"x"}]`), auth, 400, "inventory subscription takes no key"},
		{"key not a string", subsQuery("app", `[{"topic":"document","key":3}]`), auth, 400, "subscription key must be a string"},
		{"cursor not a string", subsQuery("app", `[{"topic":"inventory","cursor":3}]`), auth, 400, "subscription cursor must be a string"},
		{"cursor over 1024 bytes", subsQuery("app", `[{"topic":"inventory","cursor":"`+strings.Repeat("c", 1025)+`"}]`), auth, 400, "subscription cursor is too large"},
		{"unknown field", subsQuery("app", `[{"topic":"inventory","colour":"blue"}]`), auth, 400, `subscription contains an unknown field: "colour"`},
		{"duplicate field", subsQuery("app", `[{"topic":"inventory","topic":"worktrees"}]`), auth, 400, `subscription contains a duplicate field: "topic"`},
		{"field name in another case", subsQuery("app", `[{"Topic":"inventory"}]`), auth, 400, `subscription contains an unknown field: "Topic"`},
		{"activity=2", "ws=app&activity=2", auth, 400, "activity must be 0 or 1"},
		{"reconnect=x", "ws=app&reconnect=x", auth, 400, "reconnect must be 0 or 1"},
		{"ws twice", "ws=app&ws=other", auth, 400, "ws must be given at most once"},
		{"subs twice", subsQuery("app", `[]`) + "&subs=" + url.QueryEscape(`[{"topic":"bogus"}]`), auth, 400, "subs must be given at most once"},
		{"activity twice", "ws=app&activity=1&activity=1", auth, 400, "activity must be given at most once"},
		{"unknown workspace", "ws=nope", auth, 404, "unknown workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/api/hub/live?"+tt.query, "", tt.headers...)
			is.Equal(r.status, tt.status)                                                // the contract's status
			is.Equal(r.header.Get("Cache-Control"), "no-store")                          // never cached
			is.True(strings.HasPrefix(r.header.Get("Content-Type"), "application/json")) // a JSON error, not a stream
			if tt.msg != "" {
				is.Equal(r.errorText(t), tt.msg) // and message
			}
		})
	}
}

func TestLiveStreamOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	id := s.login(t, "ann", annPassword)
	auth := bearer(id)
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, auth...)

	subs := `[{"topic":"worktrees"},{"topic":"document","key":""},{"topic":"inventory","cursor":null}]`
	l := s.openLive(t, subsQuery("app", subs)+"&activity=1", append(auth, "Origin", "https://evil.example")...)
	is.Equal(len(l.id), 32) // 24 random bytes, base64url: unguessable

	got := l.envelopes(7)
	byTopic := map[string]string{}
	for _, e := range got {
		byTopic[e.Topic] += e.Event.Kind + " "
		switch e.Topic {
		case "document":
			is.True(e.Key != nil && *e.Key == "") // a document key given empty is echoed
		case "activity":
			is.Equal(string(e.Event.Data), `{"running":true,"working":false,"awaiting":false,"finished":false}`) // the summary
		default:
			is.True(e.Key == nil) // other topics carry no key
		}
	}
	is.Equal(byTopic["worktrees"], "data ready ") // each subscription is owed data, then ready
	is.Equal(byTopic["document"], "data ready ")
	is.Equal(byTopic["inventory"], "data ready ")
	is.Equal(byTopic["activity"], "data ")                                                   // and one activity summary per workspace
	is.Equal(got[0].Topic+" "+got[1].Topic+" "+got[2].Topic, "worktrees worktrees activity") // the Hub's own topics at once, in attach order

	post := func(stream, body string, headers ...string) reply {
		return s.do(t, "POST", "/api/hub/live/"+stream+"/subscriptions", body, headers...)
	}
	r := post(l.id, `{"remove":[{"topic":"document","key":""}],"add":[{"topic":"worktrees","cursor":"x"}]}`, auth...)
	is.Equal(r.status, http.StatusOK)       // changed
	is.Equal(string(r.body), `{"ok":true}`) // and said so
	is.Equal(len(l.envelopes(2)), 2)        // the worktrees re-attach

	other := bearer(s.login(t, "ann", annPassword))
	r = post(l.id, `{"add":[{"topic":"inventory"}]}`, other...)
	is.Equal(r.status, http.StatusForbidden)                      // another session of the same user
	is.Equal(r.errorText(t), "stream belongs to another session") // says so
	r = post("nope", `{"add":[{"topic":"inventory"}]}`, auth...)
	is.Equal(r.status, http.StatusNotFound)    // unknown stream
	is.Equal(r.errorText(t), "unknown stream") // says so
	r = post(l.id, `{"add":[{"topic":"inventory"}],"colour":1}`, auth...)
	is.Equal(r.status, http.StatusBadRequest) // an unknown field
	r = post(l.id, `{"add":[{"topic":"inventory"}]`, auth...)
	is.Equal(r.status, http.StatusBadRequest) // invalid JSON
	r = post(l.id, `{"add":[{"topic":"inventory"}]}`, append(append([]string{}, "Cookie", s.cookieName()+"="+id), "Origin", "https://evil.example")...)
	is.Equal(r.status, http.StatusForbidden) // a cross-origin cookie request

	r = s.do(t, "POST", "/logout", "", auth...)
	is.True(r.status < 300) // logout
	is.True(l.ended())      // ends the session's stream
	r = post(l.id, `{"add":[{"topic":"inventory"}]}`, other...)
	is.Equal(r.status, http.StatusNotFound) // an ended stream is unknown
}

func TestLiveKeepalive(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	auth := bearer(s.login(t, "ann", annPassword))
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app"}`, auth...)
	l := s.openLive(t, "ws=app", auth...)
	// The stream arms its keepalive timer once its writer waits, which
	// the test cannot observe; moving the clock until one arrives, a
	// bounded number of times, is the deterministic equivalent.
	for range 500 {
		s.clock.Advance(live.KeepaliveInterval)
		select {
		case f := <-l.frames:
			is.Equal(f.comment, "keepalive") // a keepalive comment
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("no keepalive")
}

func TestLiveSubscriptionChangesRefused(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	auth := bearer(s.login(t, "ann", annPassword))
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app"}`, auth...)
	l := s.openLive(t, subsQuery("app", `[{"topic":"worktrees"}]`), auth...)
	l.envelopes(2)
	tests := []struct {
		name, body, msg string
	}{
		{"not JSON", `{"add":`, "invalid JSON body"},
		{"not an object", `[]`, "request must be a JSON object"},
		{"unknown field", `{"add":[],"colour":1}`, `request contains an unknown field: "colour"`},
		{"add not an array", `{"add":{"topic":"inventory"}}`, "add must be an array"},
		{"17 additions", `{"add":[` + strings.Repeat(`{"topic":"inventory"},`, 16) + `{"topic":"inventory"}]}`, "too many subscriptions"},
		{"entry not an object", `{"add":[1]}`, "subscription must be an object"},
		{"unknown topic", `{"add":[{"topic":"weather"}]}`, "subscription topic must be document, inventory, conversation, or worktrees"},
		{"activity added", `{"add":[{"topic":"activity"}]}`, "subscription topic must be document, inventory, conversation, or worktrees"},
		{"conversation without key", `{"add":[{"topic":"conversation"}]}`, "conversation subscription needs a key"},
		{"bad document key", `{"add":[{"topic":"document","key":"scope=file"}]}`, "invalid document key: scope=file requires documentId"},
		{"cursor in a removal", `{"remove":[{"topic":"inventory","cursor":"x"}]}`, `subscription contains an unknown field: "cursor"`},
		{"add twice", `{"add":[],"add":[{"topic":"inventory"}]}`, `request contains a duplicate field: "add"`},
		{"field name in another case", `{"Add":[{"topic":"inventory"}]}`, `request contains an unknown field: "Add"`},
		{"duplicate in an entry", `{"add":[{"topic":"inventory","topic":"worktrees"}]}`, `request contains a duplicate field: "topic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", "/api/hub/live/"+l.id+"/subscriptions", tt.body, auth...)
			is.Equal(r.status, http.StatusBadRequest) // refused
			is.Equal(r.errorText(t), tt.msg)          // with the reason
		})
	}
	is := is.New(t)
	r := s.do(t, "POST", "/api/hub/live/"+l.id+"/subscriptions", `{"add":[{"topic":"worktrees"}]}`, auth...)
	is.Equal(r.status, http.StatusOK) // the stream is unaffected
	got := l.envelopes(2)
	is.Equal(got[0].Topic+" "+got[1].Topic, "worktrees worktrees") // and only the valid change reached it
}

// A stream over the Hub's bounds is refused with 429 before it starts,
// and so is a change that would follow too many contexts.
func TestLiveLimitsOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{LiveLimits: live.Limits{PerDeviceSession: 1, UpstreamsPerWorkspace: 1}}, nil)
	s.repo(t, "/home/ann/app")
	auth := bearer(s.login(t, "ann", annPassword))
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app"}`, auth...)
	l := s.openLive(t, subsQuery("app", `[{"topic":"document"}]`), auth...)
	r := s.do(t, "GET", "/api/hub/live?ws=app", "", auth...)
	is.Equal(r.status, http.StatusTooManyRequests)                                                         // a second stream of the session
	is.Equal(r.errorText(t), "too many live streams for this device session (at most 1): close one first") // says why
	is.True(strings.HasPrefix(r.header.Get("Content-Type"), "application/json"))                           // before any stream byte
	r = s.do(t, "POST", "/api/hub/live/"+l.id+"/subscriptions", `{"add":[{"topic":"inventory"}]}`, auth...)
	is.Equal(r.status, http.StatusTooManyRequests)                                                 // a second upstream on the workspace
	is.Equal(r.errorText(t), "too many distinct live subscriptions on this workspace (at most 1)") // says why
}
