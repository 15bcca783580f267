package child_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/child/shells"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	apidoc "github.com/wharfhub/wharf/api"
	"github.com/wharfhub/wharf/hub"
)

// contract is api/openapi.yaml and a router over it, loaded once.
var contract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // match the test server's host
	return doc, nil
})

var contractRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := contract()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// contractTransport validates every answer of a documented operation
// against api/openapi.yaml (its status, headers and closed body) before
// the test sees it, and every other answer as a JSON error with no-store.
type contractTransport struct{ t testing.TB }

func (c contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	router, err := contractRouter()
	if err != nil {
		c.t.Fatalf("contract: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Content-Type") != "application/json" {
			c.t.Errorf("%s %s -> %d: an undocumented answer that is not a JSON error: %s", req.Method, req.URL, resp.StatusCode, body)
		}
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		c.t.Errorf("contract violation: %s %s -> %d: %v\nbody: %s", req.Method, req.URL, resp.StatusCode, err, body)
	}
	return resp, nil
}

// checkSchema validates a JSON value against a schema of the contract.
func checkSchema(t testing.TB, schema string, raw []byte) {
	t.Helper()
	doc, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v: %s", schema, err, raw)
	}
	if err := doc.Components.Schemas[schema].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s: %v: %s", schema, err, raw)
	}
}

// shellsServer serves a child's handler with a shells registry over a
// temporary folder, running /bin/sh.
func shellsServer(t *testing.T) (*httptest.Server, *shells.Registry, *http.Client) {
	t.Helper()
	reg := shells.New(shells.Options{Dir: t.TempDir(), Env: []string{"SHELL=/bin/sh", "PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "PS1=$ ", "ENV="}})
	srv := httptest.NewServer(child.NewHandler("ws", child.HandlerOptions{Shells: reg, KeepAlive: time.Hour}))
	t.Cleanup(func() {
		srv.Close()
		reg.Close()
	})
	return srv, reg, &http.Client{Transport: contractTransport{t: t}}
}

// call sends a request through c and returns the status and body.
func call(t *testing.T, c *http.Client, method, u, body string, header http.Header) (int, []byte) {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestTheShellsAPIAnswersAsTheContractSays(t *testing.T) {
	srv, reg, c := shellsServer(t)
	base := srv.URL + "/s/ws/api/shells"
	status, body := call(t, c, "POST", base, `{}`, nil)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	var first shells.Info
	_ = json.Unmarshal(body, &first)
	view := reg.WatchTerminal("npm test")
	defer view.Release()
	agentID := reg.List()[1].ID
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	for _, tc := range []struct {
		name, method, path, body string
		header                   http.Header
		status                   int
		want                     string // a part of the body
	}{
		{"list", "GET", "", "", nil, 200, `"label":"shell 1","kind":"shell","readOnly":false`},
		{"create with a label and size", "POST", "", `{"label":" logs ","cols":120,"rows":40}`, nil, 201, `"label":"logs"`},
		{"rename", "PATCH", "/" + first.ID, `{"label":"build"}`, nil, 200, `"label":"build"`},
		{"an unknown field", "POST", "", `{"colour":"red"}`, nil, 400, ""},
		{"malformed JSON", "POST", "", `{`, nil, 400, ""},
		{"no body", "POST", "", ``, nil, 400, ""},
		{"an empty label", "POST", "", `{"label":"  "}`, nil, 400, ""},
		{"a control character", "POST", "", `{"label":"a\u001bb"}`, nil, 400, ""},
		{"a label of 65 characters", "POST", "", `{"label":"` + strings.Repeat("x", 65) + `"}`, nil, 400, ""},
		{"no rows", "POST", "", `{"rows":0}`, nil, 400, ""},
		{"too many columns", "POST", "", `{"cols":1001}`, nil, 400, ""},
		{"a body over 4 KiB", "POST", "", `{"label":"` + strings.Repeat(" ", 5000) + `x"}`, nil, 413, ""},
		{"renaming an unknown shell", "PATCH", "/s99", `{"label":"x"}`, nil, 404, `{"error":"unknown shell"}`},
		{"renaming to a bad label", "PATCH", "/" + first.ID, `{"label":""}`, nil, 400, ""},
		{"renaming an agent's terminal", "PATCH", "/" + agentID, `{"label":"x"}`, nil, 409, `{"error":"an agent's terminal cannot be renamed"}`},
		{"closing an agent's terminal", "DELETE", "/" + agentID, "", nil, 409, `{"error":"an agent's terminal closes with its agent"}`},
		{"closing an unknown shell", "DELETE", "/s99", "", nil, 404, `{"error":"unknown shell"}`},
		{"attaching to an unknown shell", "GET", "/s99/attach", "", upgrade, 404, `{"error":"unknown shell"}`},
		{"attaching at a bad offset", "GET", "/" + first.ID + "/attach?offset=-4", "", upgrade, 400, ""},
		{"attaching without an upgrade", "GET", "/" + first.ID + "/attach", "", nil, 400, `{"error":"not a WebSocket upgrade"}`},
		{"an unknown path under shells", "GET", "/" + first.ID + "/nope", "", nil, 404, `{"error":"not found"}`},
		{"an unknown method", "PUT", "", `{}`, nil, 404, `{"error":"not found"}`},
		{"close", "DELETE", "/" + first.ID, "", nil, 204, ""},
		{"close again", "DELETE", "/" + first.ID, "", nil, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, body := call(t, c, tc.method, base+tc.path, tc.body, tc.header)
			is.Equal(status, tc.status)                      // the status
			is.True(strings.Contains(string(body), tc.want)) // the body
		})
	}
	t.Run("a ninth shell", func(t *testing.T) {
		is := is.New(t)
		for range shells.MaxUserShells - 1 {
			status, _ := call(t, c, "POST", base, `{}`, nil)
			is.Equal(status, 201) // shells up to the bound start
		}
		status, body := call(t, c, "POST", base, `{}`, nil)
		is.Equal(status, 429)                                                        // the ninth is refused
		is.Equal(string(body), `{"error":"too many shells in this workspace"}`+"\n") // with the protocol's message
	})
}

func TestAnAttachedShellEchoesAndItsMessagesMatchTheContract(t *testing.T) {
	is := is.New(t)
	srv, _, c := shellsServer(t)
	base := srv.URL + "/s/ws/api/shells"
	_, body := call(t, c, "POST", base, `{"cols":100,"rows":30}`, nil)
	var in shells.Info
	is.NoErr(json.Unmarshal(body, &in)) // created
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/"+in.ID+"/attach", nil)
	is.NoErr(err) // attached
	defer conn.CloseNow()
	_, hello, err := conn.Read(ctx)
	is.NoErr(err) // the hello arrives
	checkSchema(t, "ShellServerMessage", hello)
	is.True(strings.Contains(string(hello), `"cols":100,"rows":30`)) // with the size
	for _, m := range []string{`{"type":"resize","cols":90,"rows":20}`, `{"type":"input","data":"echo hi-$((40+2)); exit 0\n"}`} {
		checkSchema(t, "ShellClientMessage", []byte(m))
		is.NoErr(conn.Write(ctx, websocket.MessageText, []byte(m))) // sent
	}
	var out strings.Builder
	var texts [][]byte
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			is.Equal(websocket.CloseStatus(err), websocket.StatusNormalClosure) // closed normally at the exit
			break
		}
		if typ == websocket.MessageBinary {
			out.Write(b)
			continue
		}
		checkSchema(t, "ShellServerMessage", b)
		texts = append(texts, b)
	}
	is.True(strings.Contains(out.String(), "hi-42"))                      // the echo came back
	is.Equal(string(texts[len(texts)-1]), `{"type":"exit","exitCode":0}`) // then the exit
	for _, m := range []string{`{"type":"skip","offset":3}`, `{"type":"ack","offset":3}`} {
		checkSchema(t, map[bool]string{true: "ShellServerMessage", false: "ShellClientMessage"}[strings.Contains(m, "skip")], []byte(m))
	}
}

func TestTheFactsAndTheActivityFeedFollowTheShells(t *testing.T) {
	is := is.New(t)
	srv, reg, c := shellsServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+childproto.FeedPath(hub.TopicActivity), nil)
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err) // the activity feed opens
	defer resp.Body.Close()
	feed := readStream(resp.Body)
	revision := func() int64 {
		t.Helper()
		ev := feed.next(t)
		a, err := childproto.DecodeActivity([]byte(ev.data))
		is.NoErr(err) // an activity frame
		return a.Shells
	}
	r0 := revision()
	status, body := call(t, c, "POST", srv.URL+"/s/ws/api/shells", `{"label":"tail"}`, nil)
	is.Equal(status, 201) // a shell is opened
	var in shells.Info
	_ = json.Unmarshal(body, &in)
	r1 := revision()
	is.True(r1 > r0) // a frame with a moved revision follows

	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/s/ws/api/shells/"+in.ID+"/attach", nil)
	is.NoErr(err) // attached
	r2 := revision()
	is.True(r2 > r1) // attaching moves it
	facts := factsOf(t, srv.URL)
	is.Equal(facts.Shells, []childproto.Shell{{Attached: true, Label: "tail"}}) // the facts list it attached
	conn.Close(websocket.StatusNormalClosure, "")
	is.True(revision() > r2) // detaching moves it
	view := reg.WatchTerminal("go vet ./...")
	revision()
	facts = factsOf(t, srv.URL)
	is.Equal(facts.Shells, []childproto.Shell{{Label: "tail"}, {Label: "go vet ./..."}}) // agents' terminals are listed too
	view.Release()
	revision()
	is.Equal(len(factsOf(t, srv.URL).Shells), 1) // a released one leaves
}

// factsOf reads the child's facts.
func factsOf(t *testing.T, base string) childproto.Facts {
	t.Helper()
	resp, err := http.Get(base + childproto.FactsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	f, err := childproto.ReadFacts(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAFloodingShellLeavesTheFeedsAndTheFactsResponsive(t *testing.T) {
	is := is.New(t)
	srv, _, c := shellsServer(t)
	base := srv.URL + "/s/ws/api/shells"
	_, body := call(t, c, "POST", base, `{"label":"flood"}`, nil)
	var in shells.Info
	is.NoErr(json.Unmarshal(body, &in)) // created
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/"+in.ID+"/attach", nil)
	is.NoErr(err) // attached
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	_, _, err = conn.Read(ctx)
	is.NoErr(err)                                                                               // the hello
	is.NoErr(conn.Write(ctx, websocket.MessageText, []byte(`{"type":"input","data":"yes\n"}`))) // the flood starts
	got := 0
	for got < shells.Window {
		typ, b, err := conn.Read(ctx)
		is.NoErr(err) // output flows up to the window, never acknowledged
		if typ == websocket.MessageBinary {
			got += len(b)
		}
	}

	for _, topic := range []hub.Topic{hub.TopicActivity, hub.TopicInventory} {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+childproto.FeedPath(topic), nil)
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err) // the feed opens during the flood
		defer resp.Body.Close()
		is.Equal(readStream(resp.Body).next(t).event, "data") // and sends its first frame at once
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+childproto.FeedPath(hub.TopicActivity), nil)
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err) // the activity feed opens
	defer resp.Body.Close()
	activity := readStream(resp.Body)
	activity.next(t)
	status, body := call(t, c, "POST", base, `{"label":"calm"}`, nil)
	is.Equal(status, 201) // another shell opens during the flood
	is.NoErr(json.Unmarshal(body, &in))
	is.Equal(activity.next(t).event, "data")     // the activity feed tells at once
	is.Equal(len(factsOf(t, srv.URL).Shells), 2) // the facts answer
	calm, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/"+in.ID+"/attach", nil)
	is.NoErr(err) // the other shell attaches
	defer calm.CloseNow()
	is.NoErr(calm.Write(ctx, websocket.MessageText, []byte(`{"type":"input","data":"echo calm-$((5*5))\n"}`)))
	var out strings.Builder
	for !strings.Contains(out.String(), "calm-25") {
		typ, b, err := calm.Read(ctx)
		is.NoErr(err) // the other shell answers
		if typ == websocket.MessageBinary {
			out.Write(b)
		}
	}
}
