package daemontest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/fakes/pushservice"
)

// PushFamily drives Web Push deliveries through the kills. Each writer
// has one running workspace with two conversations with the scripted ACP
// agent and two devices enrolled for its finished turns, whose browser
// side is a fake HTTPS push service the daemons trust and allow (Prepare:
// --push-ca-file, --push-host, --push-contact). Its writes are turns (a
// prompt the agent echoes: a few per epoch, never one behind a held
// message); once those are spent it waits for the kill on a live stream
// of a second workspace, its lobby, which no device covers (a "watch",
// which the kill cuts).
//
// Its facts are the workspace running again after every restart
// ("workspace <id>" → "running"), its conversations ("conversation
// <id>"), its devices and their categories ("device <id>" → "completed"
// or "completed needsAnswer") and the Hub's VAPID key ("key <key>"), all
// set up before the kills.
//
// A finished turn becomes a delivery per device only once the Hub has
// journaled it, which no answer shows; and nothing is sent in a daemon's
// first 30 s (its users are recent), so the daemons killed every second
// or so journal deliveries they never send. The family therefore reads
// the journal (the push_deliveries table) in the database every daemon
// leaves (Stopped, on the census's copy) and what the push service
// received, which decrypted and verified each message and carries its
// payload id, the hex SHA-256 of the delivery's identity (pushPayloadID).
// For the deliveries to its devices it checks, per payload id:
//
//   - sent means received: a delivery journaled as sent has reached the
//     service (the Hub journals "sent" only after the service's 201, given
//     after it recorded the message);
//   - journaled means delivered: every delivery a census found journaled
//     reaches the service at least once by the end of the run (Settle
//     waits up to 60 s after the last start for the ones still unsent).
//     Nothing else may settle one unsent: its device and login stay, its
//     workspace stays registered, no live stream looks at it; only its
//     5-minute send window may run out (noted, on a long run);
//   - never twice, but for a send a kill cut: a delivery once found
//     journaled as sent is never received again, and each copy before that
//     came from a daemon that ended with it unsent (at most one copy per
//     census that found it unsent; noted);
//   - nothing unjournaled: every message received is of a delivery in the
//     journal, and no delivery leaves the journal;
//   - the service refused nothing (a VAPID token the Hub's key does not
//     verify, a body that does not decrypt).
//
// It notes how many deliveries a daemon left unsent that a later one
// sent: the invariant was exercised, not vacuous.
func PushFamily() *Family {
	f := &pushFamily{writers: map[*Writer]*pushWriter{}, settleWait: pushHeld + pushSlack}
	return &Family{Name: "push", Prepare: f.prepare, Setup: f.setup, Next: f.next, Observe: f.observe,
		Stopped: f.stopped, Settle: f.settle}
}

// Bounds of the push family.
const (
	// pushTurnsPerEpoch bounds the turns a writer sends between two
	// restarts: enough for deliveries to be journaled before most kills,
	// few enough to keep the journal (and the last daemon's sending) small.
	pushTurnsPerEpoch = 3
	// pushHeld is how long a Hub holds every push after it starts
	// (hub/notify.RecentWindow); Settle waits that long and pushSlack more.
	pushHeld  = 30 * time.Second
	pushSlack = 30 * time.Second
)

// pushFamily is one run's push family: its push service and its writers'
// state.
type pushFamily struct {
	svc *pushservice.Service // set by prepare
	// settleWait bounds Settle's wait (a test's is shorter).
	settleWait time.Duration

	mu      sync.Mutex // guards writers (the map, not its values)
	writers map[*Writer]*pushWriter
}

// pushWriter is a writer's share. Only the writer's own methods use it,
// never two at once.
type pushWriter struct {
	ws    string            // the workspace of its devices
	lobby string            // a workspace no device covers, which it watches
	subs  map[string]string // the service's subscription id by device id
	busy  map[string]bool   // conversations with a message held behind a turn, this epoch
	turns int               // turns sent this epoch
	track map[string]*pushTrack
}

// pushTrack is what the censuses found of one delivery, by payload id.
type pushTrack struct {
	unsent       int  // censuses that found it pending or held
	sent         bool // a census found it sent
	copiesAtSent int  // the copies received by then
	expired      bool // its send window ran out unsent
}

func (f *pushFamily) writer(w *Writer) *pushWriter {
	f.mu.Lock()
	defer f.mu.Unlock()
	pw := f.writers[w]
	if pw == nil {
		pw = &pushWriter{subs: map[string]string{}, busy: map[string]bool{}, track: map[string]*pushTrack{}}
		f.writers[w] = pw
	}
	return pw
}

// prepare builds the scripted agent and starts the push service.
func (f *pushFamily) prepare(ctx context.Context, dir string) ([]string, func(), error) {
	agent, err := BuildPackage(ctx, dir, "github.com/wharfhub/wharf/fakes/acpagent")
	if err != nil {
		return nil, nil, err
	}
	if f.svc, err = pushservice.Start(pushservice.Options{}); err != nil {
		return nil, nil, err
	}
	caFile := filepath.Join(dir, "push-ca.pem")
	if err := os.WriteFile(caFile, f.svc.CAPEM(), 0o600); err != nil {
		f.svc.Close()
		return nil, nil, err
	}
	agentArg, err := json.Marshal([]string{agent, "--state", filepath.Join(dir, "agent")})
	if err != nil {
		f.svc.Close()
		return nil, nil, err
	}
	return []string{"--agent", "scripted=" + string(agentArg), "--push-contact", "mailto:crash-load@example.com",
		"--push-host", f.svc.Host(), "--push-ca-file", caFile}, f.svc.Close, nil
}

// pushState is the part of NotificationState the family reads.
type pushState struct {
	PublicKey string `json:"publicKey"`
	Device    *struct {
		ID           string   `json:"id"`
		WorkspaceIDs []string `json:"workspaceIds"`
		NeedsAnswer  bool     `json:"needsAnswer"`
		Completed    bool     `json:"completed"`
	} `json:"device"`
}

// pushCategories is a device fact's value.
func pushCategories(needsAnswer bool) string {
	if needsAnswer {
		return "completed needsAnswer"
	}
	return "completed"
}

func (f *pushFamily) setup(ctx context.Context, w *Writer) error {
	pw := f.writer(w)
	path := filepath.Join(w.Root, w.NewName("p"))
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	var ws struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	if err := w.Call(ctx, "POST", "api/hub/workspaces", map[string]any{"path": path, "init": true, "start": true}, &ws); err != nil {
		return err
	}
	pw.ws = ws.ID
	w.Model["workspace "+ws.ID] = "running"
	lobby := filepath.Join(w.Root, w.NewName("lobby"))
	if err := os.Mkdir(lobby, 0o755); err != nil {
		return err
	}
	var lw struct {
		ID string `json:"id"`
	}
	if err := w.Call(ctx, "POST", "api/hub/workspaces", map[string]any{"path": lobby, "init": true}, &lw); err != nil {
		return err
	}
	pw.lobby = lw.ID
	for range 2 {
		var c struct{ Conversation struct{ ID string } }
		if err := w.Call(ctx, "POST", "s/"+ws.ID+"/api/chat/conversations", map[string]any{"agent": "scripted"}, &c); err != nil {
			return err
		}
		w.Model["conversation "+c.Conversation.ID] = ""
	}
	var st pushState
	if err := w.Call(ctx, "GET", "api/hub/notifications", nil, &st); err != nil {
		return err
	}
	key, err := base64.RawURLEncoding.DecodeString(st.PublicKey)
	if err != nil {
		return fmt.Errorf("the VAPID key %q: %w", st.PublicKey, err)
	}
	f.svc.SetVAPIDPublicKey(key) // the same for every writer: the Hub's
	w.Model["key "+st.PublicKey] = ""
	for _, needsAnswer := range []bool{false, true} {
		sub := f.svc.NewSubscription()
		if err := w.Call(ctx, "PUT", "api/hub/notifications", map[string]any{
			"subscription": map[string]any{"endpoint": sub.Endpoint, "keys": map[string]string{
				"p256dh": base64.RawURLEncoding.EncodeToString(sub.P256DH), "auth": base64.RawURLEncoding.EncodeToString(sub.Auth)}},
			"workspaceIds": []string{ws.ID}, "needsAnswer": needsAnswer, "completed": true,
		}, &st); err != nil {
			return err
		}
		if st.Device == nil {
			return errors.New("an enrollment answered no device")
		}
		pw.subs[st.Device.ID] = f.svc.ID(sub)
		w.Model["device "+st.Device.ID] = pushCategories(needsAnswer)
	}
	return nil
}

func (f *pushFamily) next(w *Writer) (Op, error) {
	pw := f.writer(w)
	var idle []string
	for _, k := range w.Model.Keys("conversation ") {
		if id := strings.TrimPrefix(k, "conversation "); !pw.busy[id] {
			idle = append(idle, id)
		}
	}
	if pw.turns < pushTurnsPerEpoch && len(idle) > 0 {
		pw.turns++
		conv := idle[w.Rand.IntN(len(idle))]
		return Op{Name: "turn", Method: "POST", Path: "s/" + pw.ws + "/api/chat/conversations/" + url.PathEscape(conv) + "/messages",
			Body: map[string]string{"text": agentscript.Echo + " " + w.NewName("turn ")},
			Acked: func(_ Model, answer []byte) error {
				var res struct{ Held bool }
				if err := json.Unmarshal(answer, &res); err != nil {
					return fmt.Errorf("send answer %q: %v", answer, err)
				}
				if res.Held { // behind a turn still running: leave it be this epoch
					pw.busy[conv] = true
				}
				return nil
			}}, nil
	}
	// The turns are spent: wait for the kill on a live stream of the
	// lobby, which no device covers, rather than flood the daemon.
	return Op{Name: "watch", Method: "GET", Path: "api/hub/live?ws=" + url.QueryEscape(pw.lobby)}, nil
}

func (f *pushFamily) observe(ctx context.Context, w *Writer, st HubState) (Model, error) {
	pw := f.writer(w)
	pw.turns = 0 // a new epoch
	clear(pw.busy)
	m := Model{}
	running := false
	for _, ws := range st.Workspaces {
		if ws.ID == pw.ws {
			running = ws.Running
			m["workspace "+ws.ID] = map[bool]string{true: "running", false: "stopped"}[running]
		}
	}
	if running { // a stopped workspace's conversations cannot be listed: they show as lost
		var list struct{ Conversations []struct{ ID string } }
		if err := w.Call(ctx, "GET", "s/"+pw.ws+"/api/chat/conversations", nil, &list); err != nil {
			return nil, err
		}
		for _, c := range list.Conversations {
			m["conversation "+c.ID] = ""
		}
	}
	var state pushState
	if err := w.Call(ctx, "GET", "api/hub/notifications", nil, &state); err != nil {
		return nil, err
	}
	m["key "+state.PublicKey] = ""
	for id := range pw.subs {
		if err := w.Call(ctx, "GET", "api/hub/notifications?device="+url.QueryEscape(id), nil, &state); err != nil {
			return nil, err
		}
		if d := state.Device; d != nil && d.ID == id && d.Completed && slices.Equal(d.WorkspaceIDs, []string{pw.ws}) {
			m["device "+id] = pushCategories(d.NeedsAnswer)
		}
	}
	return m, nil
}

// pushPayloadID is the payload id of the delivery of occurrence
// notification to device in workspace ws: the hex SHA-256 of the JSON
// array of the three (hub/notify.PayloadID). The family restates the rule
// so that it matches each message with the journal entry it was sent
// from, rather than trusting the id the message says it has.
func pushPayloadID(ws, device, notification string) string {
	b, _ := json.Marshal([]string{ws, device, notification})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// received counts the messages pw's devices received, by payload id.
func (f *pushFamily) received(pw *pushWriter) (map[string]int, error) {
	mine := map[string]bool{}
	for _, sub := range pw.subs {
		mine[sub] = true
	}
	copies := map[string]int{}
	for _, m := range f.svc.Messages() {
		if !mine[m.Subscription] {
			continue
		}
		var p struct{ ID string }
		if err := json.Unmarshal(m.Payload, &p); err != nil || p.ID == "" {
			return nil, fmt.Errorf("a push whose payload is no PushPayload: %q", m.Payload)
		}
		copies[p.ID]++
	}
	return copies, nil
}
