package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// The harness of the push end-to-end tests (push_e2e_test.go): the test
// binary as a real `wharf serve` (race-checked under -race), its agent
// the scripted ACP agent, its push services one fake HTTPS service
// (fakes/pushservice) it trusts through --push-ca-file and allows through
// --push-host, and its store wrapped so that it tells, on stderr, every
// delivery it journaled (push_journal_test.go): what a test waits for
// before it kills the daemon or leaves a workspace, since nothing in the
// Hub's answers shows the journal.

// pushContact is the operator contact the daemons are given, which every
// VAPID token must name.
const pushContact = "mailto:ops@example.com"

// pushHub is a daemon with push configured, its first user logged in.
type pushHub struct {
	d   *daemontest.Daemon
	svc *pushservice.Service
	ann *daemontest.Client // the first user's main login
	// password is the first user's, for more logins.
	password string
	// log is everything the daemons wrote, across restarts.
	log *output
	// started is taken before the daemon started: no message can reach
	// the push service before started+notify's 30 s recent window.
	started time.Time
}

// startPushHub starts the daemon on a new state directory.
func startPushHub(ctx context.Context, t *testing.T) *pushHub {
	t.Helper()
	is := is.New(t)
	agent, err := acpAgent()
	is.NoErr(err) // the scripted agent builds
	exe, err := os.Executable()
	is.NoErr(err) // the test binary runs as the daemon
	tmp := t.TempDir()
	svc := pushservice.New(t, pushservice.Options{})
	caFile := filepath.Join(tmp, "push-ca.pem")
	is.NoErr(os.WriteFile(caFile, svc.CAPEM(), 0o600)) // the push service's authority, for --push-ca-file
	agentArg, err := json.Marshal([]string{agent, "--state", filepath.Join(tmp, "agent")})
	is.NoErr(err)
	h := &pushHub{svc: svc, log: newOutput(), started: time.Now()}
	h.d, err = daemontest.Start(ctx, daemontest.Options{Binary: exe, StateDir: filepath.Join(tmp, "state"), Log: h.log,
		Args: []string{"--agent", "scripted=" + string(agentArg), "--push-contact", pushContact,
			"--push-host", svc.Host(), "--push-ca-file", caFile},
		Env: []string{"WHARF_TEST_MAIN=1", pushJournalEnv + "=1", "GORACE=atexit_sleep_ms=0"}})
	is.NoErr(err) // the daemon serves
	t.Cleanup(func() {
		h.d.Kill()
		h.d.AwaitChildren() // before the temporary directory goes
		if t.Failed() {
			t.Logf("the daemons' log:\n%s", h.log)
		}
		if strings.Contains(h.log.String(), "DATA RACE") {
			t.Errorf("a daemon reported a data race:\n%s", h.log)
		}
		if f := svc.Failures(); len(f) > 0 {
			t.Errorf("the push service refused pushes: %+v", f)
		}
	})
	h.password, err = h.d.FirstUserPassword()
	is.NoErr(err) // the first user's password was handed over
	h.ann = h.login(ctx, t)

	var st notificationState
	h.do(ctx, t, h.ann, "GET", "api/hub/notifications", nil, "NotificationState", http.StatusOK, &st)
	is.True(st.Configured) // --push-contact turns push on
	key, err := base64.RawURLEncoding.DecodeString(st.PublicKey)
	is.NoErr(err)              // the VAPID key is unpadded base64url
	is.Equal(len(key), 65)     // an uncompressed P-256 point
	svc.SetVAPIDPublicKey(key) // what every token must verify with
	return h
}

// login logs the first user in once more: another device session.
func (h *pushHub) login(ctx context.Context, t *testing.T) *daemontest.Client {
	t.Helper()
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), h.d.URL(), daemontest.FirstUser, h.password)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// restart starts the daemon again on its state, after a kill, and points
// the first user's main login at it.
func (h *pushHub) restart(ctx context.Context, t *testing.T) {
	t.Helper()
	d, err := h.d.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	h.ann = h.ann.At(d.URL())
}

// do sends a request as c and checks its status, and its body against
// the contract's schema (Error for a refusal); a 2xx body is decoded into
// out when out is not nil.
func (h *pushHub) do(ctx context.Context, t *testing.T, c *daemontest.Client, method, path string, in any, schemaName string, want int, out any) []byte {
	t.Helper()
	status, body, err := c.Do(ctx, method, path, in, out)
	if err != nil {
		t.Fatalf("%s /%s: %v", method, path, err)
	}
	if status != want {
		t.Fatalf("%s /%s: %d, want %d: %s", method, path, status, want, body)
	}
	if status >= 400 {
		schemaName = "Error"
	}
	if schemaName != "" {
		valid(t, schemaName, body)
	}
	return body
}

// workspace registers a new folder as a workspace and starts it.
func (h *pushHub) workspace(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(canonical(t, t.TempDir()), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var ws struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	h.do(ctx, t, h.ann, "POST", "api/hub/workspaces", map[string]any{"path": dir, "init": true, "start": true},
		"WorkspaceAction", http.StatusOK, &ws)
	if !ws.Running {
		t.Fatalf("workspace %s did not start", name)
	}
	return ws.ID
}

// conversation opens a conversation with the scripted agent in ws.
func (h *pushHub) conversation(ctx context.Context, t *testing.T, ws string) string {
	t.Helper()
	var res struct{ Conversation struct{ ID string } }
	h.do(ctx, t, h.ann, "POST", "s/"+ws+"/api/chat/conversations", map[string]any{"agent": "scripted"},
		"ConversationResponse", http.StatusCreated, &res)
	return res.Conversation.ID
}

// say sends a prompt to the conversation: its first word is the script
// the agent plays (fakes/agentscript).
func (h *pushHub) say(ctx context.Context, t *testing.T, ws, conv, text string) {
	t.Helper()
	h.do(ctx, t, h.ann, "POST", "s/"+ws+"/api/chat/conversations/"+url.PathEscape(conv)+"/messages",
		map[string]any{"text": text}, "SendMessageResult", http.StatusAccepted, nil)
}

// pendingPermission returns the id of the permission request of conv
// that waits for an answer.
func (h *pushHub) pendingPermission(ctx context.Context, t *testing.T, ws, conv string) string {
	t.Helper()
	var snap struct{ Items []map[string]any }
	h.do(ctx, t, h.ann, "GET", "s/"+ws+"/api/chat/conversations/"+url.PathEscape(conv), nil,
		"ConversationSnapshot", http.StatusOK, &snap)
	for _, it := range snap.Items {
		if _, answered := it["choiceId"]; it["kind"] == "permission" && !answered {
			return strings.TrimPrefix(it["id"].(string), "permission:")
		}
	}
	t.Fatalf("conversation %s has no permission waiting", conv)
	return ""
}

// answer allows permission request req of conv.
func (h *pushHub) answer(ctx context.Context, t *testing.T, ws, conv, req string) {
	t.Helper()
	h.do(ctx, t, h.ann, "POST", "s/"+ws+"/api/chat/conversations/"+url.PathEscape(conv)+"/permissions/"+url.PathEscape(req),
		map[string]any{"choiceId": "allow"}, "RequestAnswered", http.StatusOK, nil)
}

// notificationState is the part of NotificationState the tests read.
type notificationState struct {
	Configured bool   `json:"configured"`
	PublicKey  string `json:"publicKey"`
	Device     *struct {
		ID                 string   `json:"id"`
		WorkspaceIDs       []string `json:"workspaceIds"`
		Active             bool     `json:"active"`
		LastSentAt         *string  `json:"lastSentAt"`
		LastAcknowledgedAt *string  `json:"lastAcknowledgedAt"`
	} `json:"device"`
}

// enroll makes a browser subscription at the push service and enrolls it
// as c's device for the workspaces wss and the categories given; it
// returns the device's id and the subscription.
func (h *pushHub) enroll(ctx context.Context, t *testing.T, c *daemontest.Client, wss []string, needsAnswer, completed bool) (string, hub.PushSubscription) {
	t.Helper()
	sub := h.svc.NewSubscription()
	body := map[string]any{
		"subscription": map[string]any{"endpoint": sub.Endpoint, "expirationTime": nil, "keys": map[string]string{
			"p256dh": base64.RawURLEncoding.EncodeToString(sub.P256DH), "auth": base64.RawURLEncoding.EncodeToString(sub.Auth)}},
		"workspaceIds": wss, "needsAnswer": needsAnswer, "completed": completed,
	}
	var st notificationState
	// A feed that does not catch up within the Hub's 3 s answers 503 "try
	// again", which a client does: on a loaded machine a session started a
	// moment ago may be that slow.
	for try := 1; ; try++ {
		status, raw, err := c.Do(ctx, "PUT", "api/hub/notifications", body, &st)
		if err != nil {
			t.Fatalf("PUT /api/hub/notifications: %v", err)
		}
		if status == http.StatusServiceUnavailable && try < 3 {
			valid(t, "Error", raw)
			t.Logf("enrollment %d answered %s; trying again", try, raw)
			continue
		}
		if status != http.StatusOK {
			t.Fatalf("PUT /api/hub/notifications: %d %s", status, raw)
		}
		valid(t, "NotificationState", raw)
		break
	}
	if st.Device == nil || !st.Device.Active || !slices.Equal(st.Device.WorkspaceIDs, wss) {
		t.Fatalf("enrollment answered %+v", st.Device)
	}
	return st.Device.ID, sub
}

// pushed is one message the push service took, its payload decoded.
type pushed struct {
	pushservice.Message
	P struct {
		Version                                       int
		ID, Device, Kind, Title, Body, URL, CreatedAt string
	}
	Created time.Time // P.CreatedAt
}

// received returns the messages sub received so far, each checked as a
// browser would take it: a payload that is a PushPayload, a VAPID token
// for the service naming the operator's contact, a TTL within the send
// window and the payload's id as its Topic.
func (h *pushHub) received(t *testing.T, sub hub.PushSubscription) []pushed {
	t.Helper()
	var out []pushed
	for _, m := range h.svc.Messages() {
		if m.Subscription != h.svc.ID(sub) {
			continue
		}
		valid(t, "PushPayload", m.Payload)
		p := pushed{Message: m}
		if err := json.Unmarshal(m.Payload, &p.P); err != nil {
			t.Fatal(err)
		}
		var err error
		if p.Created, err = time.Parse(time.RFC3339Nano, p.P.CreatedAt); err != nil {
			t.Fatal(err)
		}
		if m.Claims.Sub != pushContact || m.Claims.Aud != "https://"+h.svc.Host() || m.Urgency != "normal" ||
			m.TTL <= 0 || m.TTL > 5*time.Minute || m.Topic != p.P.ID[:32] || m.Status != http.StatusCreated {
			t.Fatalf("a push as no browser's service takes it: %+v", m)
		}
		out = append(out, p)
	}
	return out
}

// await waits until sub has received n messages and returns them.
func (h *pushHub) await(ctx context.Context, t *testing.T, sub hub.PushSubscription, n int) []pushed {
	t.Helper()
	for {
		all := h.svc.Messages()
		if mine := h.received(t, sub); len(mine) >= n {
			return mine
		}
		if _, err := h.svc.Wait(ctx, len(all)+1); err != nil {
			t.Fatalf("waiting for message %d of %s: %v; it has %d; failures %+v", n, h.svc.ID(sub), err,
				len(h.received(t, sub)), h.svc.Failures())
		}
	}
}

// journaled waits until the running daemon has journaled the nth delivery
// of device in that kind and state (journalTeller).
func (h *pushHub) journaled(ctx context.Context, t *testing.T, device string, kind hub.NotificationKind, state hub.PushDeliveryState, n int) {
	t.Helper()
	line := journalLine(h.d.Pid(), device, string(kind), string(state), n)
	if _, err := h.log.waitFor(ctx, func(s string) bool { return strings.Contains(s, line) }); err != nil {
		t.Fatalf("no %q: %v", strings.TrimSpace(line), err)
	}
}

// conversationURL is the dashboard page a payload opens for conv of ws.
func conversationURL(ws, conv string) string {
	return "/w/" + url.PathEscape(ws) + "/c/" + url.PathEscape(conv)
}

// liveStream is one open live stream.
type liveStream struct {
	resp   *http.Response
	events *daemontest.SSEReader
}

// stream opens c's live stream on ws, which makes c's user present on it,
// and returns once the Hub has counted it (its hello). The caller ends
// it with leave.
func stream(ctx context.Context, t *testing.T, c *daemontest.Client, ws string) liveStream {
	t.Helper()
	resp, err := c.Request(ctx, "GET", "api/hub/live?ws="+url.QueryEscape(ws), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("live stream: %v %v", err, resp)
	}
	t.Cleanup(func() { resp.Body.Close() })
	l := liveStream{resp: resp, events: daemontest.ReadSSE(resp.Body)}
	if _, err := l.events.Until(ctx, func(e daemontest.Event) bool { return e.Name == "hello" }); err != nil {
		t.Fatalf("live stream: no hello: %v", err)
	}
	return l
}

// leave logs c out, which ends its live stream l: the Hub counts the
// stream's user gone from its workspace before it answers, so what
// happens after leave returns happens after the user left. It returns
// the time just before, from which the user is recent for notify's 30 s.
func (h *pushHub) leave(ctx context.Context, t *testing.T, c *daemontest.Client, l liveStream) time.Time {
	t.Helper()
	left := time.Now()
	h.do(ctx, t, c, "POST", "logout", nil, "RevocationResult", http.StatusOK, nil)
	if err := l.events.Ended(ctx); err != nil {
		t.Fatalf("the live stream did not end with its login: %v", err)
	}
	return left
}
