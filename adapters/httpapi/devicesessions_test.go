package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/hub/service"
)

type deviceSession struct {
	Handle      string
	DeviceLabel string
	IssuedAt    int64
	Current     bool
}

func (s *testServer) deviceSessions(t *testing.T, headers ...string) []deviceSession {
	t.Helper()
	r := s.do(t, "GET", "/api/hub/sessions", "", headers...)
	if r.status != http.StatusOK {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	var list struct{ Sessions []deviceSession }
	r.json(t, &list)
	return list.Sessions
}

func TestLogout(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	cookie := []string{"Cookie", s.cookieName() + "=" + id}

	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"no credentials", nil},
		{"cookie only", cookie},
		{"forged bearer", bearer(strings.Repeat("A", 43))},
		{"basic authorization", []string{"Authorization", "Basic YW5uOng="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := s.snapshot(t)
			r := s.do(t, "POST", "/logout", "", tc.headers...)
			is.Equal(r.status, http.StatusForbidden) // logout needs an active bearer
			is.Equal(s.snapshot(t), before)          // and revokes nothing
		})
	}
	is.Equal(s.do(t, "GET", "/api/hub/state", "", cookie...).status, http.StatusOK) // still signed in

	r := s.do(t, "POST", "/logout", "", bearer(id)...)
	is.Equal(r.status, http.StatusOK)                                                             // logout
	is.Equal(string(r.body), "{\"revoked\":true}\n")                                              // acknowledged
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(id)...).status, http.StatusUnauthorized) // the bearer is dead
	is.Equal(s.do(t, "GET", "/api/hub/state", "", cookie...).status, http.StatusUnauthorized)     // and so is the cookie
	is.Equal(s.do(t, "POST", "/logout", "", bearer(id)...).status, http.StatusForbidden)          // twice
}

func TestDeviceSessions(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	first := s.login(t, "ann", annPassword)
	s.clock.Advance(time.Minute)
	second := s.login(t, "ann", annPassword, "User-Agent", "Mozilla/5.0 (iPhone) Safari/605.1.15")
	bob := s.login(t, "bob", bobPassword)

	list := s.deviceSessions(t, bearer(second)...)
	is.Equal(len(list), 2)                             // ann's sessions only
	is.True(list[0].Current && !list[1].Current)       // the caller's own is marked
	is.True(list[0].IssuedAt > list[1].IssuedAt)       // newest first
	is.Equal(list[0].IssuedAt, s.clock.Now().Unix())   // in epoch seconds
	is.True(!strings.Contains(second, list[0].Handle)) // the handle is not part of the id
	is.True(!strings.Contains(first, list[1].Handle))  // for any session
	is.Equal(list[0].DeviceLabel, "test")              // the label the client gave

	bobs := s.deviceSessions(t, bearer(bob)...)
	r := s.do(t, "POST", "/api/hub/sessions/"+bobs[0].Handle+"/revoke", "", bearer(second)...)
	is.Equal(r.status, http.StatusNotFound)                                                       // another user's handle is unknown
	is.Equal(r.errorText(t), "unknown session")                                                   // with the same message
	is.Equal(s.do(t, "POST", "/api/hub/sessions/nope/revoke", "", bearer(second)...).status, 404) // an unknown handle
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(bob)...).status, http.StatusOK)          // bob's session lives

	r = s.do(t, "POST", "/api/hub/sessions/"+list[1].Handle+"/revoke", "", bearer(second)...)
	is.Equal(r.status, http.StatusOK)                                                                // revoke the other device
	is.Equal(string(r.body), "{\"revoked\":true,\"current\":false}\n")                               // not the caller's own
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(first)...).status, http.StatusUnauthorized) // dead at once
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(second)...).status, http.StatusOK)          // the caller keeps working
	is.Equal(len(s.deviceSessions(t, bearer(second)...)), 1)                                         // and the list shrank
	r = s.do(t, "POST", "/api/hub/sessions/"+list[1].Handle+"/revoke", "", bearer(second)...)
	is.Equal(r.status, http.StatusNotFound) // revoking twice

	cookie := []string{"Cookie", s.cookieName() + "=" + second}
	r = s.do(t, "POST", "/api/hub/sessions/"+list[0].Handle+"/revoke", "", cookie...)
	is.Equal(r.status, http.StatusOK)                                 // revoke the current session over the cookie
	is.Equal(string(r.body), "{\"revoked\":true,\"current\":true}\n") // the caller's own
	cleared := (&http.Response{Header: r.header}).Cookies()
	is.Equal(len(cleared), 1)                                                                    // the cookie is cleared
	is.Equal(cleared[0].Name, s.cookieName())                                                    // under this port's name
	is.True(cleared[0].MaxAge < 0 && cleared[0].Value == "")                                     // with an expired empty value
	is.Equal(s.do(t, "GET", "/api/hub/sessions", "", cookie...).status, http.StatusUnauthorized) // signed out
}

func TestSessionLifetime(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{DeviceSessionLifetime: 2 * time.Hour}, nil)
	id := s.login(t, "ann", annPassword)
	s.clock.Advance(2*time.Hour - time.Second)
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(id)...).status, http.StatusOK) // alive until the end
	s.clock.Advance(time.Second)
	r := s.do(t, "GET", "/api/hub/state", "", bearer(id)...)
	is.Equal(r.status, http.StatusUnauthorized)         // expired: the lifetime is absolute
	is.Equal(r.errorText(t), "authentication required") // with the one message
	is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
}

func TestAuthentication(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	revoked := s.login(t, "ann", annPassword)
	s.do(t, "POST", "/logout", "", bearer(revoked)...)
	good := s.cookieName() + "=" + id
	for _, tc := range []struct {
		name    string
		headers []string
		status  int
	}{
		{"bearer", bearer(id), 200},
		{"lower-case scheme", []string{"Authorization", "bearer " + id}, 200},
		{"cookie", []string{"Cookie", good}, 200},
		{"nothing", nil, 401},
		{"forged id", bearer(strings.Repeat("A", 43)), 401},
		{"malformed id", bearer("not-a-session"), 401},
		{"tampered id", bearer(tamper(id)), 401},
		{"revoked id", bearer(revoked), 401},
		{"empty bearer", []string{"Authorization", "Bearer "}, 401},
		{"bad bearer never falls back to the cookie", append(bearer("x"), "Cookie", good), 401},
		{"bearer beats a bad cookie", append(bearer(id), "Cookie", s.cookieName()+"=x"), 200},
		{"another scheme falls through to the cookie", []string{"Authorization", "Basic YW5uOng=", "Cookie", good}, 200},
		{"cookie of another port", []string{"Cookie", "wharf_hub_1=" + id}, 401},
		{"bare cookie at a non-default port", []string{"Cookie", "wharf_hub=" + id}, 401},
		{"empty cookie, then the right one", []string{"Cookie", s.cookieName() + "=; " + good}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/api/hub/state", "", tc.headers...)
			is.Equal(r.status, tc.status) // status
			if tc.status == 401 {
				is.Equal(r.errorText(t), "authentication required") // one message for every failure
			}
		})
	}
}

// TestCookieName copies the spec's rule: <service>_hub at the scheme's
// default port, <service>_hub_<port> elsewhere; the device cookie
// follows it.
func TestCookieName(t *testing.T) {
	s := newServer(t, service.Config{}, nil, httpapi.Options{AllowedHosts: []string{"hub.example"}})
	for _, tc := range []struct {
		host, proto, want string
	}{
		{"hub.example", "", "wharf_hub"},
		{"hub.example:80", "", "wharf_hub"},
		{"hub.example:443", "", "wharf_hub_443"},
		{"hub.example:443", "https", "wharf_hub"},
		{"hub.example", "https", "wharf_hub"},
		{"hub.example:80", "https", "wharf_hub_80"},
		{"hub.example:4701", "", "wharf_hub_4701"},
		{"[::1]:4701", "", "wharf_hub_4701"},
		{"[::1]", "", "wharf_hub"},
	} {
		t.Run(tc.host+" "+tc.proto, func(t *testing.T) {
			is := is.New(t)
			headers := []string{"Host", tc.host}
			if tc.proto != "" {
				headers = append(headers, "X-Forwarded-Proto", tc.proto)
			}
			r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, headers...)
			is.Equal(r.status, http.StatusOK) // login
			c := (&http.Response{Header: r.header}).Cookies()
			is.Equal(len(c), 2)                                                 // two cookies
			is.Equal(c[0].Name, tc.want)                                        // the session cookie, named after the request's port
			is.Equal(c[1].Name, strings.Replace(tc.want, "_hub", "_device", 1)) // and the device cookie likewise
			s.secret(c[1].Value)
			id := s.sessionOf(t, r)
			is.Equal(s.do(t, "GET", "/api/hub/state", "", append(headers, "Cookie", tc.want+"="+id)...).status, 200) // read back under that name
			if tc.want != "wharf_hub" {
				is.Equal(s.do(t, "GET", "/api/hub/state", "", append(headers, "Cookie", "wharf_hub="+id)...).status, 401) // a bare name is ignored there
			}
		})
	}
}

// TestSameOrigin is the truth table of the CSRF check on a cookie
// request that changes state.
func TestSameOrigin(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	self := "http://127.0.0.1:" + s.port
	for _, tc := range []struct {
		name    string
		headers []string
		allowed bool
	}{
		{"neither header (a non-browser client)", nil, true},
		{"same origin", []string{"Origin", self}, true},
		{"same origin, same-origin fetch", []string{"Origin", self, "Sec-Fetch-Site", "same-origin"}, true},
		{"user-initiated fetch", []string{"Sec-Fetch-Site", "none"}, true},
		{"another host", []string{"Origin", "http://evil.example:" + s.port}, false},
		{"another port", []string{"Origin", "http://127.0.0.1:1"}, false},
		// The scheme is not compared: behind a TLS proxy that does not say
		// so, the Hub cannot know it, and no other server can answer at
		// the Hub's own host and port.
		{"same host and port, other scheme", []string{"Origin", "https://127.0.0.1:" + s.port}, true},
		{"opaque origin", []string{"Origin", "null"}, false},
		{"same-site fetch", []string{"Sec-Fetch-Site", "same-site"}, false},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, false},
		{"same origin but cross-site fetch", []string{"Origin", self, "Sec-Fetch-Site", "cross-site"}, false},
		{"foreign origin but same-origin fetch", []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "same-origin"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			victim := s.login(t, "ann", annPassword)
			caller := s.login(t, "ann", annPassword)
			handle := s.deviceSessions(t, bearer(victim)...)[0].Handle
			before := s.snapshot(t)
			r := s.do(t, "POST", "/api/hub/sessions/"+handle+"/revoke", "",
				append([]string{"Cookie", s.cookieName() + "=" + caller}, tc.headers...)...)
			if tc.allowed {
				is.Equal(r.status, http.StatusOK) // same-origin: the revocation happens
				return
			}
			is.Equal(r.status, http.StatusForbidden)                  // cross-origin cookie request refused
			is.Equal(r.errorText(t), "cross-origin request rejected") // with its message
			is.Equal(s.snapshot(t), before)                           // and nothing revoked
			r = s.do(t, "POST", "/api/hub/sessions/"+handle+"/revoke", "", append(bearer(caller), tc.headers...)...)
			is.Equal(r.status, http.StatusOK) // a bearer request is not origin-checked
		})
	}
	t.Run("login", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "Origin", "http://evil.example")
		is.Equal(r.status, http.StatusForbidden)                // a cross-origin login is refused
		is.Equal(r.errorText(t), "cross-origin login rejected") // with its message
		is.Equal(r.header.Get("Set-Cookie"), "")                // and sets no cookie
	})
}

// tamper changes the last character of a session id.
func tamper(id string) string {
	last := byte('A')
	if id[len(id)-1] == 'A' {
		last = 'B'
	}
	return id[:len(id)-1] + string(last)
}

// A revoked session is refused on its very next request, on every
// connection that carried it, with no grace period: the Hub keeps the
// active sessions in memory and drops one as its revocation commits.
func TestRevocationReachesEveryConnection(t *testing.T) {
	for _, how := range []string{"revoke", "logout", "passwd"} {
		t.Run(how, func(t *testing.T) {
			is := is.New(t)
			s := newServer(t, service.Config{}, nil)
			id := s.login(t, "ann", annPassword)
			other := s.login(t, "ann", annPassword)
			conns := make([]*http.Client, 3) // each its own keep-alive connection
			for i := range conns {
				conns[i] = &http.Client{Transport: contractTransport{t: t, base: &http.Transport{MaxConnsPerHost: 1}}}
				t.Cleanup(conns[i].CloseIdleConnections)
			}
			get := func(c *http.Client) int {
				req, _ := http.NewRequest("GET", s.URL+"/api/hub/state", nil)
				req.Header.Set("Authorization", "Bearer "+id)
				resp, err := c.Do(req)
				is.NoErr(err)
				resp.Body.Close()
				return resp.StatusCode
			}
			for _, c := range conns {
				is.Equal(get(c), http.StatusOK) // each connection is authenticated
			}
			switch how {
			case "revoke":
				var handle string
				for _, d := range s.deviceSessions(t, bearer(other)...) {
					if !d.Current {
						handle = d.Handle
					}
				}
				is.Equal(s.do(t, "POST", "/api/hub/sessions/"+handle+"/revoke", "", bearer(other)...).status, http.StatusOK) // revoked from another device
			case "logout":
				is.Equal(s.do(t, "POST", "/logout", "", bearer(id)...).status, http.StatusOK) // logged out
			case "passwd":
				is.NoErr(s.hub.SetPassword(t.Context(), "ann", "a brand new password")) // the password changed
			}
			for _, c := range conns {
				is.Equal(get(c), http.StatusUnauthorized) // the very next request on each connection is refused
			}
		})
	}
}
