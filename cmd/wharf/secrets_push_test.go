package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/fakes/pushservice"
)

// pushArgs are the flags that turn Web Push on against svc: its host
// allowed, its authority trusted (written under dir).
func pushArgs(t *testing.T, svc *pushservice.Service, dir string) []string {
	t.Helper()
	ca := filepath.Join(dir, "push-ca.pem")
	if err := os.WriteFile(ca, svc.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--push-contact", "mailto:ops@example.com", "--push-host", svc.Host(), "--push-ca-file", ca}
}

// exercisePush is the notifications family's part of the scenario: a
// browser's subscription (its endpoint and both keys registered) is
// enrolled for the workspace, a test message is sent through the real
// Web Push adapter to the fake push service, which decrypts it, and the
// device acknowledges it. The VAPID private key is registered too: only
// its file, push.key, may hold it.
func exercisePush(ctx context.Context, t *testing.T, sec *daemontest.Secrets, c *daemontest.Client, svc *pushservice.Service, stateDir, ws string) {
	t.Helper()
	is := is.New(t)
	var st struct {
		Configured bool   `json:"configured"`
		PublicKey  string `json:"publicKey"`
		Device     *struct {
			ID                 string  `json:"id"`
			LastSentAt         *string `json:"lastSentAt"`
			LastAcknowledgedAt *string `json:"lastAcknowledgedAt"`
		} `json:"device"`
	}
	status, _, err := c.Do(ctx, "GET", "api/hub/notifications", nil, &st)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // push support
	is.True(st.Configured)          // is configured
	public, err := base64.RawURLEncoding.DecodeString(st.PublicKey)
	is.NoErr(err) // the VAPID key
	svc.SetVAPIDPublicKey(public)
	registerVAPIDKey(t, sec, stateDir)

	sub := svc.NewSubscription()
	p256dh, auth := base64.RawURLEncoding.EncodeToString(sub.P256DH), base64.RawURLEncoding.EncodeToString(sub.Auth)
	sec.Register("push endpoint", sub.Endpoint)
	sec.Register("push subscription p256dh", p256dh)
	sec.Register("push subscription auth", auth)
	body := map[string]any{"subscription": map[string]any{"endpoint": sub.Endpoint, "keys": map[string]string{"p256dh": p256dh, "auth": auth}},
		"workspaceIds": []string{ws}, "needsAnswer": true, "completed": true}
	status, raw, err := c.Do(ctx, "PUT", "api/hub/notifications", body, &st)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // enrolled
	is.True(st.Device != nil)       // the device
	t.Logf("enrolled: %s", raw)
	device := st.Device.ID

	status, _, err = c.Do(ctx, "POST", "api/hub/notifications/test?device="+device, nil, nil)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // a test is queued
	msgs, err := svc.Wait(ctx, 1)
	is.NoErr(err) // the push service got it, decrypted and verified
	var payload struct{ ID, Device, Kind string }
	is.NoErr(json.Unmarshal(msgs[0].Payload, &payload)) // its payload
	is.Equal(payload.Kind, "test")                      // the test
	status, _, err = c.Do(ctx, "POST", "api/hub/notifications/acknowledgements", map[string]string{"device": device, "id": payload.ID}, nil)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // acknowledged
	// The Hub journals the push service's answer just after it answered:
	// read the device until it shows (bounded by ctx).
	for st.Device.LastSentAt == nil && ctx.Err() == nil {
		status, _, err = c.Do(ctx, "GET", "api/hub/notifications?device="+device, nil, &st)
		is.NoErr(err)
		is.Equal(status, http.StatusOK)
	}
	is.True(st.Device.LastSentAt != nil && st.Device.LastAcknowledgedAt != nil) // Settings shows both
}

// registerVAPIDKey registers the Hub's VAPID private key in the forms it
// could leak in: its PEM body's lines (allowed in push.key alone), and
// its scalar in base64url and hex (allowed nowhere).
func registerVAPIDKey(t *testing.T, sec *daemontest.Secrets, stateDir string) {
	t.Helper()
	n, err := sec.RegisterKeyFile("VAPID private key", stateDir, "push.key")
	if err != nil || n != 1 {
		t.Fatalf("the VAPID key file: %d keys, %v", n, err)
	}
}
