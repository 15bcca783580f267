package httpapi_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/service"
)

// pushSubscription is a browser's subscription with real keys on a real
// push service's host.
func pushSubscription(t *testing.T, endpoint string) map[string]any {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}}
}

type notificationStateReply struct {
	Configured bool    `json:"configured"`
	PublicKey  *string `json:"publicKey"`
	Device     *struct {
		ID                 string   `json:"id"`
		WorkspaceIDs       []string `json:"workspaceIds"`
		Active             bool     `json:"active"`
		LastSentAt         *string  `json:"lastSentAt"`
		LastAcknowledgedAt *string  `json:"lastAcknowledgedAt"`
	} `json:"device"`
}

func TestADeviceIsEnrolledReadTestedAcknowledgedAndRemovedOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/app")
	is.Equal(s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, auth...).status, 200) // registered, running

	var st notificationStateReply
	r := s.do(t, "GET", "/api/hub/notifications", "", auth...)
	is.Equal(r.status, http.StatusOK)
	r.json(t, &st)
	is.True(st.Configured && st.PublicKey != nil && len(*st.PublicKey) == 87) // the VAPID key, base64url
	is.Equal(st.Device, nil)                                                  // no device asked for

	sub := pushSubscription(t, "https://updates.push.services.mozilla.com/wpush/v2/ann")
	s.secret(sub["keys"].(map[string]string)["p256dh"])
	s.secret(sub["keys"].(map[string]string)["auth"])
	s.secret("wpush/v2/ann")
	r = s.do(t, "PUT", "/api/hub/notifications", jsonOf(t, map[string]any{"subscription": sub,
		"workspaceIds": []string{"app", "app"}, "needsAnswer": true, "completed": false}), auth...)
	is.Equal(r.status, http.StatusOK) // enrolled
	r.json(t, &st)
	is.True(st.Device != nil && st.Device.Active)     // under this login
	is.Equal(st.Device.WorkspaceIDs, []string{"app"}) // duplicates removed
	is.Equal(st.Device.LastSentAt, nil)               // never sent

	id := st.Device.ID
	r = s.do(t, "GET", "/api/hub/notifications?device="+id, "", auth...)
	is.Equal(r.status, http.StatusOK)
	r.json(t, &st)
	is.Equal(st.Device.ID, id) // read back

	r = s.do(t, "POST", "/api/hub/notifications/test?device="+id, "", auth...)
	is.Equal(r.status, http.StatusOK) // a test is queued
	pushes, err := s.pusher.Wait(t.Context(), 1)
	is.NoErr(err) // and sent
	var payload struct{ ID, Device string }
	if err := json.Unmarshal(pushes[0].Message.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	is.Equal(payload.Device, id) // naming the device
	r = s.do(t, "POST", "/api/hub/notifications/test?device="+id, "", auth...)
	is.Equal(r.status, http.StatusTooManyRequests) // not twice in a row
	r = s.do(t, "POST", "/api/hub/notifications/acknowledgements", jsonOf(t, map[string]string{"device": id, "id": payload.ID}), auth...)
	is.Equal(r.status, http.StatusOK) // the service worker showed it
	r = s.do(t, "GET", "/api/hub/notifications?device="+id, "", auth...)
	r.json(t, &st)
	is.True(st.Device.LastAcknowledgedAt != nil) // and Settings can say so

	bob := bearer(s.login(t, "bob", bobPassword))
	r = s.do(t, "DELETE", "/api/hub/notifications?device="+id, "", bob...)
	is.Equal(r.status, http.StatusNotFound)                                                             // another user's device
	is.Equal(r.errorText(t), "notification device not found")                                           // is not found
	is.Equal(s.do(t, "DELETE", "/api/hub/notifications?device="+id, "", auth...).status, http.StatusOK) // removed
	is.Equal(s.do(t, "DELETE", "/api/hub/notifications?device="+id, "", auth...).status, http.StatusNotFound)
}

func TestBadNotificationRequestsAreRefusedAndChangeNothing(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/app")
	if r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":false}`, auth...); r.status != 200 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	with := func(change func(m map[string]any)) string {
		m := map[string]any{"subscription": pushSubscription(t, "https://fcm.googleapis.com/fcm/send/x"),
			"workspaceIds": []string{"app"}, "needsAnswer": true, "completed": true}
		change(m)
		return jsonOf(t, m)
	}
	sub := func(endpoint string) func(map[string]any) {
		return func(m map[string]any) { m["subscription"] = pushSubscription(t, endpoint) }
	}
	const (
		badSub   = "invalid browser push subscription"
		badPrefs = "invalid notification preferences or workspace access"
		badID    = "invalid device id"
	)
	long := strings.Repeat("d", 129)
	for _, row := range []struct {
		name, method, path, body string
		status                   int
		message                  string
	}{
		{"an http endpoint", "PUT", "", with(sub("http://fcm.googleapis.com/fcm/send/x")), 400, badSub},
		{"an endpoint off the push services", "PUT", "", with(sub("https://push.example.com/x")), 400, badSub},
		{"an endpoint with userinfo", "PUT", "", with(sub("https://u:p@fcm.googleapis.com/x")), 400, badSub},
		{"an endpoint with a port", "PUT", "", with(sub("https://fcm.googleapis.com:8443/x")), 400, badSub},
		{"an endpoint with a fragment", "PUT", "", with(sub("https://fcm.googleapis.com/x#f")), 400, badSub},
		{"a p256dh off the curve", "PUT", "", with(func(m map[string]any) {
			m["subscription"].(map[string]any)["keys"].(map[string]string)["p256dh"] = "BA" + strings.Repeat("A", 85)
		}), 400, badSub},
		{"an auth of 15 bytes", "PUT", "", with(func(m map[string]any) {
			m["subscription"].(map[string]any)["keys"].(map[string]string)["auth"] = strings.Repeat("A", 20)
		}), 400, badSub},
		{"an unknown workspace", "PUT", "", with(func(m map[string]any) { m["workspaceIds"] = []string{"nope"} }), 400, badPrefs},
		{"no workspaceIds", "PUT", "", with(func(m map[string]any) { delete(m, "workspaceIds") }), 400, badPrefs},
		{"257 workspaceIds", "PUT", "", with(func(m map[string]any) { m["workspaceIds"] = make([]string, 257) }), 400, badPrefs},
		{"needsAnswer not a boolean", "PUT", "", with(func(m map[string]any) { m["needsAnswer"] = "yes" }), 400, badPrefs},
		{"allWorkspaces not a boolean", "PUT", "", with(func(m map[string]any) { m["allWorkspaces"] = 1 }), 400, badPrefs},
		{"a device id of 129 characters", "PUT", "", with(func(m map[string]any) { m["id"] = long }), 400, badID},
		{"a device id not a string", "PUT", "", with(func(m map[string]any) { m["id"] = 7 }), 400, badID},
		{"an unknown field", "PUT", "", with(func(m map[string]any) { m["extra"] = true }), 400, ""},
		{"a body over 64 KiB", "PUT", "", with(func(m map[string]any) { m["id"] = strings.Repeat("x", 70<<10) }), 413, ""},
		{"a device query over 128 characters", "GET", "?device=" + long, "", 400, badID},
		{"a DELETE without a device", "DELETE", "", "", 400, badID},
		{"a DELETE of an unknown device", "DELETE", "?device=nope", "", 404, "notification device not found"},
		{"a test of an unknown device", "POST", "/test?device=nope", "", 404, "notification device not found"},
		{"an acknowledgement over 4 KiB", "POST", "/acknowledgements", `{"device":"` + strings.Repeat("d", 5<<10) + `","id":""}`, 413, ""},
		{"an acknowledgement of an unknown device", "POST", "/acknowledgements", `{"device":"nope","id":"` + strings.Repeat("0", 64) + `"}`, 404, "notification device not found"},
	} {
		t.Run(row.name, func(t *testing.T) {
			is := is.New(t)
			before := s.snapshot(t)
			r := s.do(t, row.method, "/api/hub/notifications"+row.path, row.body, auth...)
			is.Equal(r.status, row.status)                      // the status
			is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
			if row.message != "" {
				is.Equal(r.errorText(t), row.message) // the rule's message
			}
			is.Equal(s.snapshot(t), before) // nothing stored changed
		})
	}
}

func TestACrossSiteEnrollmentWithTheCookieIsRefused(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	body := jsonOf(t, map[string]any{"subscription": pushSubscription(t, "https://fcm.googleapis.com/fcm/send/x"),
		"workspaceIds": []string{}, "needsAnswer": true, "completed": true})
	r := s.do(t, "PUT", "/api/hub/notifications", body, "Cookie", s.cookieName()+"="+id, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	is.Equal(r.status, http.StatusForbidden)            // cross-origin
	is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
}
