package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/service"
)

// shellServer is a test server with ann's workspace app running, whose
// child serves the test shells.
func shellServer(t *testing.T) (*testServer, *testShells, string) {
	t.Helper()
	s := newServer(t, service.Config{}, nil)
	shells := newTestShells("app")
	s.backend.SetSessionHandler("app", shells)
	s.repo(t, "/home/ann/app")
	id := s.login(t, "ann", annPassword)
	if r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, bearer(id)...); r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	return s, shells, id
}

// exchange writes msg and reads the next message, both within a bound.
func exchange(t *testing.T, conn *websocket.Conn, typ websocket.MessageType, msg string) (websocket.MessageType, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.Write(ctx, typ, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, b, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return got, string(b)
}

// hello reads the child's hello and returns its offset.
func hello(t *testing.T, conn *websocket.Conn) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	typ, b, err := conn.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		t.Fatalf("hello: %v %v", typ, err)
	}
	var h struct {
		Type   string
		Offset int
	}
	if json.Unmarshal(b, &h) != nil || h.Type != "hello" {
		t.Fatalf("hello: %s", b)
	}
	return h.Offset
}

// A terminal attaches with a bearer or a same-origin cookie (or a cookie
// with no Origin: no browser sends none), gets what the child sends, and
// relays both ways; a close on either side reaches the other, code and
// reason. What is typed never reaches the logs.
func TestATerminalAttachesAndRelaysBothWays(t *testing.T) {
	s, shells, id := shellServer(t)
	const typed = "export TOKEN=hunter2-typed-into-a-shell"
	s.secret(typed)
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"bearer", bearer(id)},
		{"bearer from another origin", append(bearer(id), "Origin", "https://elsewhere.example")},
		{"same-origin cookie", []string{"Cookie", s.cookieName() + "=" + id, "Origin", s.URL}},
		{"cookie without Origin", []string{"Cookie", s.cookieName() + "=" + id}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			conn, _, err := s.attach(t, "app", "s1", "?offset=42", tc.headers...)
			is.NoErr(err)                // attached
			is.Equal(hello(t, conn), 42) // the offset reached the child
			in, _ := json.Marshal(map[string]string{"type": "input", "data": typed + "\r"})
			typ, out := exchange(t, conn, websocket.MessageText, string(in))
			is.Equal(typ, websocket.MessageText) // text stays text
			is.Equal(out, string(in))            // relayed there and back
			typ, out = exchange(t, conn, websocket.MessageBinary, "\x00\xff bytes")
			is.Equal(typ, websocket.MessageBinary) // binary stays binary
			is.Equal(out, "\x00\xff bytes")
			is.NoErr(conn.Close(4000, "tab closed"))                                   // the client closes
			is.Equal(shells.childEnded(t), childEnd{code: 4000, reason: "tab closed"}) // and the child hears it as sent
		})
	}
	t.Run("a message over 64 KiB", func(t *testing.T) {
		is := is.New(t)
		conn := s.mustAttach(t, "app", "s1", bearer(id)...)
		conn.SetReadLimit(1 << 20)
		hello(t, conn)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		is.NoErr(conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", 64<<10)))) // at the bound: relayed
		_, b, err := conn.Read(ctx)
		is.NoErr(err)
		is.Equal(len(b), 64<<10)
		conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", 64<<10+1)))
		is.Equal(closeOf(conn).Code, websocket.StatusMessageTooBig)                                           // beyond it: closed with 1009
		is.Equal(shells.childEnded(t), childEnd{code: websocket.StatusGoingAway, reason: "client went away"}) // and the child told
	})
	t.Run("the child's close", func(t *testing.T) {
		is := is.New(t)
		conn := s.mustAttach(t, "app", "exit", bearer(id)...)
		hello(t, conn)
		ce := closeOf(conn)
		is.Equal(ce.Code, websocket.StatusNormalClosure) // reaches the client as sent
		is.Equal(ce.Reason, "exited")
	})
}

// Every refusal answers as JSON before any upgrade, and those the Hub
// makes never reach the child.
func TestAttachRefusalsComeBeforeTheUpgrade(t *testing.T) {
	s, shells, id := shellServer(t)
	s.repo(t, "/home/ann/stopped")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/stopped","start":false}`, bearer(id)...)
	cookie := []string{"Cookie", s.cookieName() + "=" + id}
	for _, tc := range []struct {
		name    string
		path    string
		headers []string
		status  int
		message string
		child   bool // the request reached the child
	}{
		{"a cookie from another site", "/s/app/api/shells/s1/attach", append(cookie, "Origin", "https://evil.example"), 403, "cross-origin request rejected", false},
		{"a cookie from a cross-site fetch", "/s/app/api/shells/s1/attach", append(cookie, "Sec-Fetch-Site", "cross-site"), 403, "cross-origin request rejected", false},
		{"no session", "/s/app/api/shells/s1/attach", []string{"Origin", s.URL}, 401, "authentication required", false},
		{"a revoked-looking bearer", "/s/app/api/shells/s1/attach", bearer("A0000000000000000000000000000000000000000000"), 401, "authentication required", false},
		{"an unknown workspace", "/s/nope/api/shells/s1/attach", bearer(id), 404, "unknown workspace: nope", false},
		{"a stopped workspace", "/s/stopped/api/shells/s1/attach", bearer(id), 503, "workspace stopped is not running", false},
		{"an unknown shell", "/s/app/api/shells/s9/attach", bearer(id), 404, "unknown shell", true},
		{"a bad offset", "/s/app/api/shells/s1/attach?offset=bad", bearer(id), 400, "offset must be a non-negative integer", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := shells.requests.Load()
			r := s.do(t, "GET", tc.path, "", append(upgradeHeaders(), tc.headers...)...)
			is.Equal(r.status, tc.status)                       // refused
			is.Equal(r.errorText(t), tc.message)                // saying why
			is.Equal(shells.requests.Load() > before, tc.child) // the child asked only when it must answer
			is.Equal(r.header.Get("Upgrade"), "")               // never upgraded
		})
	}
	t.Run("a request that is no upgrade", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/s/app/api/shells/s1/attach", "", bearer(id)...)
		is.Equal(r.status, http.StatusBadRequest)                                // refused
		is.Equal(r.errorText(t), "a WebSocket upgrade (version 13) is required") // as JSON, not the library's text
	})
}

// A user holds at most 16 terminals at once, over all their devices;
// the 17th is refused with Retry-After before the upgrade, a closed one
// frees its place, and another user is not counted against them.
func TestAUserAttachesAtMostSixteenTerminals(t *testing.T) {
	is := is.New(t)
	s, shells, id := shellServer(t)
	other := s.login(t, "ann", annPassword)
	var conns []*websocket.Conn
	for i := range service.MaxAttachmentsPerUser {
		who := id
		if i%2 == 1 {
			who = other
		}
		conns = append(conns, s.mustAttach(t, "app", "s1", bearer(who)...))
	}
	r := s.do(t, "GET", "/s/app/api/shells/s1/attach", "", append(upgradeHeaders(), bearer(other)...)...)
	is.Equal(r.status, http.StatusTooManyRequests) // the 17th is refused
	is.Equal(r.header.Get("Retry-After"), "1")     // saying when to try again
	is.True(r.errorText(t) != "")                  // and why

	s.repo(t, "/home/bob/app")
	bob := s.login(t, "bob", bobPassword)
	s.mustAttach(t, "app", "s1", bearer(bob)...) // bob has his own bound

	is.NoErr(conns[0].Close(websocket.StatusNormalClosure, ""))
	shells.childEnded(t) // the Hub let go of it
	conn, _, err := s.attach(t, "app", "s1", "", bearer(other)...)
	for range 50 { // the Hub's release follows the child's close: bounded retries on the refusal alone
		if err == nil {
			break
		}
		conn, _, err = s.attach(t, "app", "s1", "", bearer(other)...)
	}
	is.NoErr(err) // a closed terminal's place is free again
	hello(t, conn)
}

// The events that end a device session close its terminals at once with
// 1008 "session ended", and the workspace's stop closes them with 1001;
// the child is told the client detached.
func TestTheEndOfASessionClosesItsTerminals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func(t *testing.T, s *testServer, id string)
		code   websocket.StatusCode
		reason string
	}{
		{"logout", func(t *testing.T, s *testServer, id string) {
			s.do(t, "POST", "/logout", "", bearer(id)...)
		}, websocket.StatusPolicyViolation, "session ended"},
		{"revocation from another device", func(t *testing.T, s *testServer, id string) {
			other := s.login(t, "ann", annPassword)
			var list struct {
				Sessions []struct {
					Handle  string
					Current bool
				}
			}
			s.do(t, "GET", "/api/hub/sessions", "", bearer(id)...).json(t, &list)
			for _, x := range list.Sessions {
				if x.Current {
					s.do(t, "POST", "/api/hub/sessions/"+x.Handle+"/revoke", "", bearer(other)...)
				}
			}
		}, websocket.StatusPolicyViolation, "session ended"},
		{"password change", func(t *testing.T, s *testServer, _ string) {
			if err := s.hub.SetPassword(context.Background(), "ann", "an entirely new passphrase"); err != nil {
				t.Fatal(err)
			}
		}, websocket.StatusPolicyViolation, "session ended"},
		{"expiry", func(t *testing.T, s *testServer, _ string) {
			s.clock.Advance(s.hub.DeviceSessionLifetime())
		}, websocket.StatusPolicyViolation, "session ended"},
		{"workspace stop", func(t *testing.T, s *testServer, id string) {
			s.do(t, "POST", "/api/hub/sessions/app/stop", "", bearer(id)...)
		}, websocket.StatusGoingAway, "workspace stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s, shells, id := shellServer(t)
			conn := s.mustAttach(t, "app", "s1", "Cookie", s.cookieName()+"="+id, "Origin", s.URL)
			hello(t, conn)
			tc.end(t, s, id)
			ce := closeOf(conn)
			is.Equal(ce.Code, tc.code)                                                                           // closed at once
			is.Equal(ce.Reason, tc.reason)                                                                       // saying why
			is.Equal(shells.childEnded(t), childEnd{code: websocket.StatusGoingAway, reason: "client detached"}) // the child let go
		})
	}
}
