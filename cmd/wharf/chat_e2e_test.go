package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"
	"github.com/santhosh-tekuri/jsonschema/v6"

	apidoc "github.com/wharfhub/wharf/api"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// schemas compiles the contract's component schemas, each once: the
// live envelopes of a flood are thousands, so validation must be cheap.
var schemas = struct {
	sync.Mutex
	doc      any
	compiled map[string]*jsonschema.Schema
}{compiled: map[string]*jsonschema.Schema{}}

// schema returns the compiled component schema name.
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	schemas.Lock()
	defer schemas.Unlock()
	if s := schemas.compiled[name]; s != nil {
		return s
	}
	if schemas.doc == nil {
		doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
		if err != nil {
			t.Fatalf("contract: %v", err)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("contract: %v", err)
		}
		if schemas.doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
			t.Fatalf("contract: %v", err)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:wharf:openapi", schemas.doc); err != nil {
		t.Fatalf("contract: %v", err)
	}
	s, err := c.Compile("urn:wharf:openapi#/components/schemas/" + name)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	schemas.compiled[name] = s
	return s
}

// valid fails the test unless raw validates against the contract's schema.
func valid(t *testing.T, name string, raw []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%.2000s", name, err, raw)
	}
	if err := schema(t, name).Validate(v); err != nil {
		t.Fatalf("%s: %v\n%.2000s", name, err, raw)
	}
}

// chatOps are the contract's workspace chat operations (x-served-by:
// workspace, tag chat): method, a pattern of their path, their documented statuses.
var chatOps = sync.OnceValue(func() []chatOp {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		panic(err)
	}
	var ops []chatOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-served-by"] != "workspace" || !slices.Contains(op.Tags, "chat") {
				continue // the shells API is the child's own tests' (adapters/child)
			}
			segs := strings.Split(path, "/")
			for i, seg := range segs {
				if strings.HasPrefix(seg, "{") {
					segs[i] = `[^/]+`
				} else {
					segs[i] = regexp.QuoteMeta(seg)
				}
			}
			re := strings.Join(segs, "/")
			statuses := map[int]bool{}
			for code := range op.Responses.Map() {
				n, _ := strconv.Atoi(code)
				statuses[n] = true
			}
			ops = append(ops, chatOp{id: op.OperationID, method: method, path: regexp.MustCompile("^" + re + "$"), statuses: statuses})
		}
	}
	return ops
})

type chatOp struct {
	id, method string
	path       *regexp.Regexp
	statuses   map[int]bool
}

// chatExercised holds the chat operations whose answers a test checked.
var chatExercised sync.Map

// documented fails the test unless the chat operation at method and
// rawURL documents status, and records the operation as exercised.
func documented(t *testing.T, method, rawURL string, status int) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range chatOps() {
		if op.method == method && op.path.MatchString(u.EscapedPath()) {
			if !op.statuses[status] {
				t.Fatalf("%s %s answered %d, which %s does not document", method, u.Path, status, op.id)
			}
			chatExercised.Store(op.id, true)
			return
		}
	}
	t.Fatalf("%s %s is no chat operation of the contract", method, u.Path)
}

// acpAgent builds the scripted ACP agent once.
var acpAgent = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "acpagent-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "acpagent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/wharfhub/wharf/fakes/acpagent").CombinedOutput(); err != nil {
		return "", &buildFailure{string(out)}
	}
	return bin, nil
})

type buildFailure struct{ out string }

func (e *buildFailure) Error() string { return "build acpagent: " + e.out }

// chatEnvelope is a live envelope as the chat tests read it.
type chatEnvelope struct {
	WS     string `json:"ws"`
	Topic  string `json:"topic"`
	Key    string `json:"key"`
	Cursor string `json:"cursor"`
	Event  struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	} `json:"event"`
	chat struct {
		Type   string         `json:"type"`
		Status string         `json:"status"`
		Reason string         `json:"reason"`
		Item   map[string]any `json:"item"`
	}
	activity struct{ Working, Awaiting, Finished bool }
}

// liveReader reads a live stream, validating every envelope.
type liveReader struct {
	t        *testing.T
	envs     chan chatEnvelope
	streamID string
}

func openLive(ctx context.Context, t *testing.T, c *http.Client, base, token, ws, subs string) *liveReader {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"api/hub/live?activity=1&ws="+ws+"&subs="+url.QueryEscape(subs), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("live stream: %v %v", err, resp)
	}
	lr := &liveReader{t: t, envs: make(chan chatEnvelope, 1<<16)}
	hello := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		defer close(lr.envs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 64<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				event = name
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			if event == "hello" {
				var h struct{ StreamID string }
				json.Unmarshal([]byte(data), &h)
				hello <- h.StreamID
				continue
			}
			var e chatEnvelope
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				continue
			}
			valid(t, "LiveEnvelope", []byte(data)) // every frame the client reads
			if e.Topic == "conversation" && len(e.Event.Data) > 0 {
				json.Unmarshal(e.Event.Data, &e.chat)
			}
			if e.Topic == "activity" && e.Event.Kind == "data" {
				json.Unmarshal(e.Event.Data, &e.activity)
			}
			lr.envs <- e
		}
	}()
	select {
	case lr.streamID = <-hello:
	case <-ctx.Done():
		t.Fatal("no hello")
	}
	return lr
}

// until reads envelopes until ok accepts one.
func (lr *liveReader) until(what string, ok func(chatEnvelope) bool) chatEnvelope {
	lr.t.Helper()
	deadline := time.After(45 * time.Second)
	for {
		select {
		case e, open := <-lr.envs:
			if !open {
				lr.t.Fatalf("the stream ended waiting for %s", what)
			}
			if ok(e) {
				return e
			}
		case <-deadline:
			lr.t.Fatalf("no %s", what)
		}
	}
}

// all reads envelopes until each of conds accepted one, in any order:
// the activity topic and a conversation are separate upstreams.
func (lr *liveReader) all(what string, conds ...func(chatEnvelope) bool) {
	lr.t.Helper()
	left := len(conds)
	done := make([]bool, len(conds))
	lr.until(what, func(e chatEnvelope) bool {
		for i, ok := range conds {
			if !done[i] && ok(e) {
				done[i] = true
				left--
			}
		}
		return left == 0
	})
}

// isStatus accepts a conversation status s.
func isStatus(s string) func(chatEnvelope) bool {
	return func(e chatEnvelope) bool {
		return e.Topic == "conversation" && e.chat.Type == "conversation.status" && e.chat.Status == s
	}
}

// status waits for a conversation status.
func (lr *liveReader) status(s string) chatEnvelope {
	return lr.until("status "+s, func(e chatEnvelope) bool {
		return e.Topic == "conversation" && e.chat.Type == "conversation.status" && e.chat.Status == s
	})
}

// chatHub is a real Hub whose agent `scripted` is the scripted ACP agent,
// its first user logged in, with one started workspace on a new
// repository: what the conversation end-to-end tests start from.
type chatHub struct {
	h                   *serveProc
	c                   *http.Client
	dir, home           string   // the state directory and the user's HOME
	args                []string // serve's arguments beyond the state: the agent
	password, token, ws string   // the first user's, its bearer session, the workspace id
}

func startChatHub(ctx context.Context, t *testing.T) *chatHub {
	t.Helper()
	is := is.New(t)
	bin, err := acpAgent()
	is.NoErr(err) // the scripted agent builds
	x := &chatHub{c: newClient(t, nil), dir: stateDir(t), home: t.TempDir()}
	repo := filepath.Join(t.TempDir(), "proj")
	is.NoErr(os.Mkdir(repo, 0o755))
	gitInit(t, repo, x.home)
	repo = canonical(t, repo)
	x.args = []string{"--agent", `scripted=["` + bin + `","--state","` + filepath.Join(t.TempDir(), "agent") + `"]`}
	x.h = startChildArgs(ctx, t, x.dir, x.args, "HOME="+x.home, "GORACE=atexit_sleep_ms=0")
	x.password, x.token = loginFirstUser(ctx, t, x.c, x.h)
	var reg struct{ ID string }
	status, _ := postJSON(ctx, t, x.c, x.h.url+"api/hub/workspaces", x.token, map[string]any{"path": repo, "start": true}, &reg)
	is.Equal(status, http.StatusOK) // registered and started
	x.ws = reg.ID
	return x
}

// chatURL is the workspace's chat API, forwarded by the Hub.
func (x *chatHub) chatURL() string { return x.h.url + "s/" + x.ws + "/api/chat/" }

// restart stops the Hub cleanly and starts it again on the same state,
// logged in again.
func (x *chatHub) restart(ctx context.Context, t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.NoErr(x.h.cmd.Process.Signal(os.Interrupt))
	is.NoErr(x.h.wait(ctx)) // a clean stop
	x.h = startChildArgs(ctx, t, x.dir, x.args, "HOME="+x.home, "GORACE=atexit_sleep_ms=0")
	resp, s := login(ctx, t, x.c, x.h.url, "ann", x.password)
	is.Equal(resp.StatusCode, http.StatusOK) // the first user logs in again
	x.token = s.SessionID
}

// TestChatEndToEnd drives conversations with the scripted ACP agent
// through a real Hub and a real workspace child: the chat API forwarded
// under /s/{id}/api/chat/, the inventory, conversation and activity
// topics, bad input refused with its status, and a restart of the Hub
// that keeps the inventory and reopens the conversation's history.
func TestChatEndToEnd(t *testing.T) {
	is := is.New(t)
	// Longer than testContext: a score of turns and a restart of the Hub,
	// on a machine that may be busy.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	x := startChatHub(ctx, t)
	h, c, token, ws, chatURL := x.h, x.c, x.token, x.ws, x.chatURL()
	do := func(method, path string, body any, schema string, want int) []byte {
		t.Helper()
		resp, b := call(ctx, t, c, method, chatURL+path, token, body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
		}
		documented(t, method, chatURL+path, resp.StatusCode)
		is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached
		if want >= 400 {
			schema = "Error"
		}
		valid(t, schema, b)
		return b
	}

	var agents struct {
		Agents []struct{ ID, Availability string }
	}
	is.NoErr(json.Unmarshal(do("GET", "agents", nil, "ChatAgentList", 200), &agents))
	found := false
	for _, a := range agents.Agents {
		found = found || (a.ID == "scripted" && a.Availability == "available")
	}
	is.True(found) // the configured agent is available

	live := openLive(ctx, t, c, h.url, token, ws, `[{"topic":"inventory"}]`)
	live.until("the inventory", func(e chatEnvelope) bool { return e.Topic == "inventory" && e.Event.Kind == "data" })

	var created struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(do("POST", "conversations", map[string]any{"agent": "scripted"}, "ConversationResponse", 201), &created))
	id := created.Conversation.ID
	cid := url.PathEscape(id)
	live.until("the inventory tick of the new conversation", func(e chatEnvelope) bool { return e.Topic == "inventory" && e.Event.Kind == "data" })
	var snap struct{ Cursor string }
	is.NoErr(json.Unmarshal(do("GET", "conversations/"+cid, nil, "ConversationSnapshot", 200), &snap))
	subscribe := func(cursor string) {
		t.Helper()
		status, body := postJSON(ctx, t, c, h.url+"api/hub/live/"+live.streamID+"/subscriptions", token,
			map[string]any{"add": []any{map[string]any{"topic": "conversation", "key": id, "cursor": cursor}}}, nil)
		if status != http.StatusOK {
			t.Fatalf("subscribe: %d %s", status, body)
		}
	}
	subscribe(snap.Cursor)
	live.until("ready", func(e chatEnvelope) bool { return e.Topic == "conversation" && e.Event.Kind == "ready" })

	// A streamed answer: working while it runs, finished after.
	do("POST", "conversations/"+cid+"/messages", map[string]any{"text": agentscript.Stream}, "SendMessageResult", 202)
	live.all("working, then completed and finished",
		func(e chatEnvelope) bool { return e.Topic == "activity" && e.WS == ws && e.activity.Working },
		isStatus("completed"),
		func(e chatEnvelope) bool { return e.Topic == "activity" && e.WS == ws && e.activity.Finished })

	var after struct{ Items []map[string]any }
	is.NoErr(json.Unmarshal(do("GET", "conversations/"+cid, nil, "ConversationSnapshot", 200), &after))
	kinds := map[string]int{}
	for _, it := range after.Items {
		kinds[it["kind"].(string)]++
	}
	is.Equal(kinds["user_message"], 1)      // the message once, though the agent echoes it
	is.Equal(kinds["reasoning"], 1)         // the thought
	is.Equal(kinds["assistant_message"], 2) // the answer and the turn's usage

	// A permission: awaiting until answered; bad answers refused.
	do("POST", "conversations/"+cid+"/messages", map[string]any{"text": agentscript.Permission}, "SendMessageResult", 202)
	var perm chatEnvelope
	live.all("the permission, awaiting",
		func(e chatEnvelope) bool {
			if e.chat.Item["kind"] == "permission" {
				perm = e
				return true
			}
			return false
		},
		func(e chatEnvelope) bool { return e.Topic == "activity" && e.activity.Awaiting })
	req := url.PathEscape(strings.TrimPrefix(perm.chat.Item["id"].(string), "permission:"))
	do("POST", "conversations/"+cid+"/permissions/"+req, map[string]any{"choiceId": "maybe"}, "", 400)
	do("POST", "conversations/"+cid+"/permissions/"+req, map[string]any{"choiceId": "allow"}, "RequestAnswered", 200)
	do("POST", "conversations/"+cid+"/permissions/"+req, map[string]any{"choiceId": "allow"}, "", 409)
	live.status("completed")

	// Bad input, each with its status; the conversation stays usable.
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nimage"))
	nine := make([]any, 9)
	for i := range nine {
		nine[i] = map[string]any{"mimeType": "image/png", "data": png}
	}
	huge := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 11<<20)...))
	do("POST", "conversations/"+cid+"/messages", map[string]any{"attachments": nine}, "", 400)
	do("POST", "conversations/"+cid+"/messages", map[string]any{"attachments": []any{map[string]any{"mimeType": "image/png", "data": huge}}}, "", 413)
	do("POST", "conversations/"+cid+"/messages", map[string]any{"attachments": []any{map[string]any{"mimeType": "image/png",
		"data": base64.StdEncoding.EncodeToString([]byte("%PDF-1.7"))}}}, "", 400)
	do("POST", "conversations/"+cid+"/rename", map[string]any{"title": strings.Repeat("a", 201)}, "", 400)
	do("POST", "conversations/"+cid+"/rename", map[string]any{"title": " Build fix "}, "ConversationResponse", 200)
	do("POST", "conversations", map[string]any{"agent": "nobody"}, "", 404)
	do("POST", "conversations/"+cid+"/cancel", map[string]any{}, "", 409)
	do("POST", "conversations/"+cid+"/questions/r99", map[string]any{"action": "cancel"}, "", 404)
	do("DELETE", "conversations/"+cid+"/messages/message:99", nil, "", 404)
	do("POST", "conversations/"+cid+"/configuration", map[string]any{"model": "deep"}, "ConfigurationResponse", 200)
	var spare struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(do("POST", "conversations", map[string]any{"agent": "scripted"}, "ConversationResponse", 201), &spare))
	do("POST", "conversations/"+url.PathEscape(spare.Conversation.ID)+"/close", map[string]any{}, "ConversationClosed", 200)

	// The held queue: 20 held behind a turn, the 21st refused, then cancel.
	do("POST", "conversations/"+cid+"/messages", map[string]any{"text": agentscript.Cancel}, "SendMessageResult", 202)
	live.until("the work", func(e chatEnvelope) bool {
		return e.chat.Type == "item.upsert" && e.chat.Item["markdown"] == agentscript.Working
	})
	for i := range 20 {
		var r struct{ Held bool }
		is.NoErr(json.Unmarshal(do("POST", "conversations/"+cid+"/messages", map[string]any{"text": "echo " + string(rune('a'+i))}, "SendMessageResult", 202), &r))
		is.True(r.Held) // held behind the running turn
	}
	do("POST", "conversations/"+cid+"/messages", map[string]any{"text": "echo one too many"}, "", 429)
	do("POST", "conversations/"+cid+"/cancel", map[string]any{}, "TurnCancelled", 200)
	live.status("interrupted")
	live.until("the last held message delivered", func(e chatEnvelope) bool {
		return e.chat.Type == "conversation.queue" && strings.Contains(string(e.Event.Data), `"queued":[]`)
	})
	live.status("completed")

	// The Hub restarts: the inventory survives and the history comes back.
	x.restart(ctx, t)
	h, token, chatURL = x.h, x.token, x.chatURL()
	var list struct{ Conversations []struct{ ID, Title string } }
	is.NoErr(json.Unmarshal(do("GET", "conversations", nil, "ConversationList", 200), &list))
	is.Equal(len(list.Conversations), 1)               // the inventory survived
	is.Equal(list.Conversations[0].ID, id)             // with its conversation
	is.Equal(list.Conversations[0].Title, "Build fix") // and its title
	live = openLive(ctx, t, c, h.url, token, ws, `[{"topic":"conversation","key":"`+id+`","cursor":"`+snap.Cursor+`"}]`)
	e := live.until("the resync", func(e chatEnvelope) bool { return e.Topic == "conversation" && e.Event.Kind == "resync" })
	is.Equal(e.chat.Reason, "generation-changed") // an old cursor cannot resume in a new child
	is.NoErr(json.Unmarshal(do("GET", "conversations/"+cid, nil, "ConversationSnapshot", 200), &snap))
	subscribe(snap.Cursor)
	live.until("the replayed answer", func(e chatEnvelope) bool {
		return e.chat.Type == "item.text_delta" || (e.chat.Type == "item.upsert" && e.chat.Item["kind"] == "assistant_message")
	})

	var missed []string
	for _, op := range chatOps() {
		if _, ok := chatExercised.Load(op.id); !ok {
			missed = append(missed, op.id)
		}
	}
	slices.Sort(missed)
	is.Equal(missed, []string(nil)) // every chat operation answered as its contract documents
}
