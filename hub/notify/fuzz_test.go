package notify_test

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// fuzzAllow is the allow-list of the fuzz targets: the defaults and one
// local push service.
var fuzzAllow = notify.Allowlist{Extra: []string{"127.0.0.1:41234"}}

// onAllowList restates the allow-list independently of Allowlist.Allows:
// the two exact hosts, a non-empty label before one of the two wildcard
// suffixes, no port; or the extra host:port.
func onAllowList(host string) bool {
	h := strings.ToLower(host)
	if h == "127.0.0.1:41234" {
		return true
	}
	if strings.Contains(h, ":") {
		return false
	}
	if h == "fcm.googleapis.com" || h == "updates.push.services.mozilla.com" {
		return true
	}
	for _, suffix := range []string{".push.apple.com", ".notify.windows.com"} {
		if label, ok := strings.CutSuffix(h, suffix); ok && label != "" {
			return true
		}
	}
	return false
}

// FuzzParseEnrollment feeds the enrollment rules any JSON body, split
// into its fields as the HTTP adapter does. They must never panic; a
// refusal is Invalid with one of the three messages; an accepted
// enrollment keeps every promise of the rules (at most 256 unique,
// registered workspaces; a 65-byte p256dh on the curve; a 16-byte auth;
// an https endpoint of at most 4096 bytes on the allow-list, without
// userinfo or fragment; an id of at most 128 characters), and reads the
// same when the client sends it back in canonical form. The seeds are in
// testdata/fuzz/FuzzParseEnrollment.
func FuzzParseEnrollment(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw notify.RawEnrollment
		if json.Unmarshal(data, &raw) != nil {
			return
		}
		e, err := notify.ParseEnrollment(raw, fuzzAllow, registered)
		if err != nil {
			var he *hub.Error
			if !errors.As(err, &he) || he.Kind != hub.Invalid ||
				(he.Message != msgSubscription && he.Message != msgPreferences && he.Message != msgDeviceID) {
				t.Fatalf("%q: refused with %#v", data, err)
			}
			if !reflect.DeepEqual(e, notify.Enrollment{}) {
				t.Fatalf("%q: refused, yet gave %+v", data, e)
			}
			return
		}
		checkEnrollment(t, data, e)
		again, err := notify.ParseEnrollment(raw, fuzzAllow, registered)
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("%q: a second reading gives %+v, %v", data, again, err)
		}
		canonical, err := json.Marshal(map[string]any{
			"id": e.ID,
			"subscription": map[string]any{"endpoint": e.Subscription.Endpoint,
				"keys": map[string]any{"p256dh": b64(e.Subscription.P256DH), "auth": b64(e.Subscription.Auth)}},
			"workspaceIds": e.WorkspaceIDs, "allWorkspaces": e.AllWorkspaces, "needsAnswer": e.NeedsAnswer, "completed": e.Completed,
		})
		if err != nil {
			t.Fatal(err)
		}
		var back notify.RawEnrollment
		if err := json.Unmarshal(canonical, &back); err != nil {
			t.Fatal(err)
		}
		if got, err := notify.ParseEnrollment(back, fuzzAllow, registered); err != nil || !reflect.DeepEqual(got, e) {
			t.Fatalf("%q: sent back as %s, reads %+v, %v", data, canonical, got, err)
		}
	})
}

// checkEnrollment checks an accepted enrollment keeps the rules' promises.
func checkEnrollment(t *testing.T, data []byte, e notify.Enrollment) {
	t.Helper()
	ids := e.WorkspaceIDs
	if ids == nil || len(ids) > notify.MaxWorkspaceIDs {
		t.Fatalf("%q: %d workspace ids (nil: %v)", data, len(ids), ids == nil)
	}
	for i, id := range ids {
		if !registered(id) || slices.Contains(ids[:i], id) {
			t.Fatalf("%q: workspace %q unregistered or repeated in %q", data, id, ids)
		}
	}
	s := e.Subscription
	if len(s.P256DH) != 65 || s.P256DH[0] != 4 {
		t.Fatalf("%q: p256dh of %d bytes starting %x", data, len(s.P256DH), s.P256DH[:min(1, len(s.P256DH))])
	}
	if _, err := ecdh.P256().NewPublicKey(s.P256DH); err != nil {
		t.Fatalf("%q: p256dh off the curve: %v", data, err)
	}
	if len(s.Auth) != 16 {
		t.Fatalf("%q: auth of %d bytes", data, len(s.Auth))
	}
	if len(s.Endpoint) > notify.MaxEndpoint || !utf8.ValidString(s.Endpoint) || strings.Contains(s.Endpoint, "#") {
		t.Fatalf("%q: endpoint %q", data, s.Endpoint)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Fragment != "" || u.Opaque != "" || !onAllowList(u.Host) {
		t.Fatalf("%q: endpoint %q (%v) is not an https push service's", data, s.Endpoint, err)
	}
	if u.Port() != "" && !slices.Contains(fuzzAllow.Extra, strings.ToLower(u.Host)) {
		t.Fatalf("%q: endpoint %q has a port", data, s.Endpoint)
	}
	if utf8.RuneCountInString(e.ID) > notify.MaxDeviceID || !utf8.ValidString(e.ID) {
		t.Fatalf("%q: device id %q", data, e.ID)
	}
}

// FuzzDeliveryLifecycle drives one delivery through any sequence of
// presences, clock steps and push-service answers (each op byte: a
// presence, a step of the clock and an answer). Whatever happens: it is
// accepted by a push service at most once; it is never sent at or after
// its deadline, nor a first time to a user who is not away, nor a
// needsAnswer within its grace; its deadline never passes the hold limit
// plus a send window; a settled delivery stays as it is; and every wait
// wakes in the future.
func FuzzDeliveryLifecycle(f *testing.F) {
	f.Add(uint8(0), uint16(0), []byte{0, 1, 2, 3})
	f.Add(uint8(1), uint16(0), []byte{2, 2 | 3<<2, 2 | 5<<2, 0 | 1<<2, 0 | 4<<5})
	f.Add(uint8(2), uint16(3000), []byte{1 | 2<<2, 2 | 6<<2, 0 | 2<<5, 0 | 2<<2 | 2<<5, 0 | 3<<2 | 3<<5, 0 | 7<<2})
	f.Add(uint8(1), uint16(65535), []byte{0, 0, 0})
	presences := []notify.Presence{notify.Away, notify.Recent, notify.Present, notify.Away}
	steps := []time.Duration{0, time.Second, 5 * time.Second, notify.Grace, 30 * time.Second, time.Minute, 5 * time.Minute, 20 * time.Minute}
	answers := []notify.Answer{
		{Result: hub.PushResult{Outcome: hub.PushAccepted, Status: 201}},
		{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 503}},
		{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: 90 * time.Second}},
		{Result: hub.PushResult{Outcome: hub.PushRejected, Status: 400}},
		{Err: errors.New("timeout")},
		{Result: hub.PushResult{Outcome: hub.PushGone, Status: 410}},
		{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 429, RetryAfter: time.Hour}},
		{Result: hub.PushResult{Outcome: hub.PushRetry, Status: 500, RetryAfter: time.Millisecond}},
	}
	kinds := []hub.NotificationKind{hub.NotifyTurnCompleted, hub.NotifyQuestionPending, hub.NotifyPermissionPending}
	f.Fuzz(func(t *testing.T, kind uint8, lateMillis uint16, ops []byte) {
		n := note(kinds[int(kind)%len(kinds)], t0)
		now := t0.Add(time.Duration(lateMillis) * time.Millisecond)
		d := notify.New(key, n, now)
		limit := t0.Add(notify.HoldLimit + notify.SendWindow)
		accepted := 0
		for _, op := range ops[:min(len(ops), 512)] {
			p := presences[op&3]
			now = now.Add(steps[(op>>2)&7])
			dec := notify.Step(d, p, now)
			got := dec.Delivery
			if got.Deadline.After(limit) {
				t.Fatalf("deadline %v past the hold limit and a window (%v)", got.Deadline, limit)
			}
			if !dec.Wake.IsZero() && !dec.Wake.After(now) {
				t.Fatalf("at %v: wakes at %v", now, dec.Wake)
			}
			if !dec.Changed && !reflect.DeepEqual(got, d) {
				t.Fatalf("unchanged, yet %+v became %+v", d, got)
			}
			if d.State.Settled() && (dec.Action != notify.Wait || dec.Changed) {
				t.Fatalf("settled %s, yet %v", d.State, dec.Action)
			}
			switch dec.Action {
			case notify.Settle:
				if got.State != hub.DeliveryDiscarded || got.SettledAt != now {
					t.Fatalf("settled as %s at %v", got.State, got.SettledAt)
				}
			case notify.Send:
				if !now.Before(got.Deadline) || got.State != hub.DeliveryPending {
					t.Fatalf("sent at %v, %s, deadline %v", now, got.State, got.Deadline)
				}
				if got.Attempts == 0 && p != notify.Away {
					t.Fatalf("a first attempt to a user who is %v", p)
				}
				if n.Kind.Category() == hub.CategoryNeedsAnswer && now.Before(n.CreatedAt.Add(notify.Grace)) {
					t.Fatalf("a needsAnswer sent within its grace at %v", now)
				}
				if ttl := notify.TTL(got, now); ttl <= 0 || ttl > notify.MaxTTL {
					t.Fatalf("TTL %v", ttl)
				}
				var gone bool
				d, gone = notify.Sent(got, answers[op>>5], now)
				if d.State == hub.DeliverySent {
					accepted++
				}
				if gone != (answers[op>>5].Err == nil && answers[op>>5].Result.Outcome == hub.PushGone) {
					t.Fatalf("gone %v after %+v", gone, answers[op>>5])
				}
				if !d.State.Settled() && !d.NextAt.After(now) {
					t.Fatalf("a retry due at %v, now %v", d.NextAt, now)
				}
				continue
			}
			d = got
		}
		if accepted > 1 {
			t.Fatalf("accepted %d times", accepted)
		}
	})
}

// TestTheFuzzSeedsCoverAcceptanceAndEveryRefusal reads the seeds of
// FuzzParseEnrollment: among them an accepted enrollment and a refusal
// with each message, so the fuzzer starts from every branch.
func TestTheFuzzSeedsCoverAcceptanceAndEveryRefusal(t *testing.T) {
	seeds := readSeeds(t, "testdata/fuzz/FuzzParseEnrollment")
	got := map[string]int{}
	for name, data := range seeds {
		var raw notify.RawEnrollment
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := notify.ParseEnrollment(raw, fuzzAllow, registered)
		if err != nil {
			got[err.Error()]++
			continue
		}
		checkEnrollment(t, data, e)
		got["accepted"]++
	}
	for _, outcome := range []string{"accepted", msgSubscription, msgPreferences, msgDeviceID} {
		if got[outcome] == 0 {
			t.Errorf("no seed is %q (%v)", outcome, got)
		}
	}
}

// fixedKey is a real P-256 public key and secret, for seeds that must not
// change from run to run.
const (
	fixedP256DH = "BD4ms_xs2tY6TDtjpJfFXjSj-Z0v66z_zysFC4pBmowSILxp3Q1XiQHpytaX1I6jXhmVoiVMrzfTwZVpN2hdszE"
	fixedAuth   = "5vYfAr_vh0LBgOTHonwBrA"
)

func TestTheSeedsKeyIsOnTheCurve(t *testing.T) {
	p, err := base64.RawURLEncoding.DecodeString(fixedP256DH)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ecdh.P256().NewPublicKey(p); err != nil {
		t.Fatal(err)
	}
}

// readSeeds reads a directory of seeds in the format of `go test -fuzz`
// (a version line, then one []byte value), by file name.
func readSeeds(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		version, value, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
		inner, ok2 := strings.CutPrefix(value, "[]byte(")
		inner, ok3 := strings.CutSuffix(inner, ")")
		s, err := strconv.Unquote(inner)
		if !ok || !ok2 || !ok3 || version != "go test fuzz v1" || err != nil {
			t.Fatalf("%s: not a seed of one []byte", f.Name())
		}
		out[f.Name()] = []byte(s)
	}
	return out
}
