package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestLogin(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`","deviceLabel":"Ann's phone"}`)
	is.Equal(r.status, http.StatusOK) // login
	var res struct{ SessionID, User string }
	r.json(t, &res)
	s.secret(res.SessionID)
	is.Equal(res.User, "ann")                           // the user
	is.Equal(len(res.SessionID), 43)                    // 32 bytes, base64url
	is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
	cookies := cookiesOf(r)
	is.Equal(len(cookies), 2) // the session cookie and the device cookie
	c := cookies[s.cookieName()]
	is.True(c != nil)                                                                              // named after the port
	is.Equal(c.Value, res.SessionID)                                                               // holding the session id
	is.True(c.HttpOnly)                                                                            // out of scripts' reach
	is.Equal(c.SameSite, http.SameSiteLaxMode)                                                     // SameSite=Lax
	is.Equal(c.Path, "/")                                                                          // for the whole Hub
	is.True(!c.Secure)                                                                             // plain HTTP: not Secure
	is.Equal(c.MaxAge, 30*24*60*60)                                                                // as long as the session
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(res.SessionID)...).status, http.StatusOK) // the id is a bearer
	d := cookies[s.deviceCookieName()]
	is.True(d != nil) // the device cookie, named after the port
	s.secret(d.Value)
	is.Equal(len(d.Value), 76)                 // holding a device token
	is.True(d.HttpOnly)                        // out of scripts' reach
	is.Equal(d.SameSite, http.SameSiteLaxMode) // SameSite=Lax
	is.Equal(d.Path, "/login")                 // sent with logins only
	is.True(!d.Secure)                         // plain HTTP: not Secure
	is.Equal(d.MaxAge, 365*24*60*60)           // a year: it outlives the sessions

	r = s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "X-Forwarded-Proto", "https")
	is.Equal(r.status, http.StatusOK) // login behind a TLS proxy
	s.secret(s.sessionOf(t, r))
	for _, c := range cookiesOf(r) {
		is.True(c.Secure) // the proxy's word adds Secure to both cookies
		s.secret(c.Value)
	}
}

// cookiesOf returns the cookies a reply sets, by name.
func cookiesOf(r reply) map[string]*http.Cookie {
	m := map[string]*http.Cookie{}
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		m[c.Name] = c
	}
	return m
}

// deviceCookieName is the device cookie's name at the test server's port.
func (s *testServer) deviceCookieName() string { return "wharf_device_" + s.port }

// deviceTokenKey returns the key the Hub signs device tokens with, from
// the store's settings, and records it as a secret.
func (s *testServer) deviceTokenKey(t *testing.T) string {
	t.Helper()
	var key string
	err := s.store.View(context.Background(), func(tx hub.Tx) error {
		var err error
		key, _, err = tx.Setting("login.device-token-key")
		return err
	})
	if err != nil || key == "" {
		t.Fatalf("no device token key: %v", err)
	}
	s.secret(key)
	return key
}

// TestLoginKnownDevice: a name under attack slows down unknown devices
// but not the device cookie of one that logged in before, which a client
// with a cookie jar presents at the next login by itself.
func TestLoginKnownDevice(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil, behindProxy)
	jar, err := cookiejar.New(nil)
	is.NoErr(err) // a cookie jar
	browser := *s.client
	browser.Jar = jar
	var replies []reply
	send := func(c *http.Client, password, addr string, headers ...string) reply {
		t.Helper()
		req, err := http.NewRequest("POST", s.URL+"/login", strings.NewReader(`{"name":"ann","password":"`+password+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", addr)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r := reply{status: resp.StatusCode, header: resp.Header, body: b}
		if r.status == http.StatusOK {
			s.sessionOf(t, r)
			for _, c := range cookiesOf(r) {
				s.secret(c.Value)
			}
		}
		replies = append(replies, r)
		return r
	}

	r := send(&browser, annPassword, "198.51.100.7")
	is.Equal(r.status, http.StatusOK) // ann logs in with her browser
	device := cookiesOf(r)[s.deviceCookieName()].Value
	for i := range 20 {
		r := send(s.client, "wrong password", fmt.Sprintf("203.0.113.%d", i/5))
		is.Equal(r.status, http.StatusUnauthorized) // an attack from several addresses
	}
	r = send(s.client, annPassword, "192.0.2.50")
	is.Equal(r.status, http.StatusTooManyRequests)                              // an unknown device is slowed down
	is.Equal(r.errorText(t), "too many attempts — wait a minute and try again") // with the usual message
	is.Equal(r.header.Get("Retry-After"), "1")                                  // and told how long to wait

	r = send(&browser, annPassword, "192.0.2.50")
	is.Equal(r.status, http.StatusOK)                           // ann's browser is not, from any address
	is.True(cookiesOf(r)[s.deviceCookieName()].Value != device) // and gets a fresh device cookie
	r = send(s.client, annPassword, "192.0.2.51", "Cookie", s.deviceCookieName()+"="+device)
	is.Equal(r.status, http.StatusOK) // nor a curl with the cookie
	r = send(s.client, annPassword, "192.0.2.52", "Cookie", "wharf_device="+device)
	is.Equal(r.status, http.StatusTooManyRequests) // a bare name at a non-default port is ignored
	r = send(s.client, annPassword, "192.0.2.52", "Cookie", s.deviceCookieName()+"="+tamper(device))
	is.Equal(r.status, http.StatusTooManyRequests) // and so is a tampered token

	s.clock.Advance(time.Second)
	r = send(s.client, annPassword, "192.0.2.52")
	is.Equal(r.status, http.StatusOK) // the unknown device gets in once the delay has passed

	key := s.deviceTokenKey(t)
	for _, r := range replies {
		is.True(!strings.Contains(string(r.body), key))       // the key never reaches a body
		is.True(!strings.Contains(fmt.Sprint(r.header), key)) // nor a header
	}
}

// TestLoginOrderOfChecks copies the spec's order: origin 403, rate limit
// 429, body 400, credentials 401.
func TestLoginOrderOfChecks(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	wrong := `{"name":"ann","password":"wrong password"}`
	for range 5 {
		is.Equal(s.do(t, "POST", "/login", wrong).status, http.StatusUnauthorized) // a failure
	}
	before := s.hub.PasswordVerifications()
	for _, tc := range []struct {
		name    string
		body    string
		headers []string
		status  int
	}{
		{"foreign origin beats the limiter", "{", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"the limiter beats a bad body", "{", nil, http.StatusTooManyRequests},
		{"the limiter beats right credentials", `{"name":"ann","password":"` + annPassword + `"}`, nil, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", "/login", tc.body, tc.headers...)
			is.Equal(r.status, tc.status)                       // status
			is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
		})
	}
	is.Equal(s.hub.PasswordVerifications(), before) // refused logins hash nothing

	s2 := newServer(t, service.Config{}, nil)
	is.Equal(s2.do(t, "POST", "/login", "{").status, http.StatusBadRequest) // a bad body before credentials
	is.Equal(s2.hub.PasswordVerifications(), uint64(0))                     // and hashes nothing
}

// TestLoginBadInput sends every malformed login the issue names; each gets
// its exact status and an {error} body, and none changes stored state.
func TestLoginBadInput(t *testing.T) {
	long := strings.Repeat("x", 10*1024)
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		msg                     string
	}{
		{"malformed JSON", "", `{"name":"ann",`, 400, "invalid JSON body"},
		{"not an object", "", `["ann"]`, 400, "request must be a JSON object"},
		{"null", "", `null`, 400, "request must be a JSON object"},
		{"empty body", "", ``, 400, "request body is required"},
		{"trailing data", "", `{"name":"ann","password":"x"} {}`, 400, "invalid JSON body: unexpected data after the object"},
		{"wrong type of name", "", `{"name":1,"password":"x"}`, 400, "name must be a string"},
		{"wrong type of password", "", `{"name":"ann","password":true}`, 400, "password must be a string"},
		{"unknown field", "", `{"name":"ann","password":"x","user":"bob"}`, 400, `request contains an unknown field: "user"`},
		{"oversize body", "", `{"name":"ann","password":"` + strings.Repeat("x", 17*1024) + `"}`, 400, "request body is larger than 16384 bytes"},
		{"empty name", "", `{"name":"","password":"x"}`, 400, "name is required"},
		{"10 KB name", "", `{"name":"` + long + `","password":"x"}`, 400, "name is longer than 64 bytes"},
		{"empty password", "", `{"name":"ann","password":""}`, 400, "password is required"},
		{"10 KB password", "", `{"name":"ann","password":"` + long + `"}`, 400, "password is longer than 1024 bytes"},
		{"non-UTF-8", "", "{\"name\":\"a\xffn\",\"password\":\"x\"}", 400, "request body is not valid UTF-8"},
		{"control character in deviceLabel", "", `{"name":"ann","password":"x","deviceLabel":"phone\u0007"}`, 400, "deviceLabel must not contain control or format characters"},
		{"bidi control in deviceLabel", "", `{"name":"ann","password":"x","deviceLabel":"phone\u202e"}`, 400, "deviceLabel must not contain control or format characters"},
		{"long deviceLabel", "", `{"name":"ann","password":"x","deviceLabel":"` + strings.Repeat("d", 65) + `"}`, 400, "deviceLabel is longer than 64 characters"},
		{"form encoding", "application/x-www-form-urlencoded", `name=ann&password=x`, 400, "Content-Type must be application/json"},
		{"wrong password", "", `{"name":"ann","password":"wrong password"}`, 401, "invalid credentials"},
		{"unknown user", "", `{"name":"eve","password":"` + annPassword + `"}`, 401, "invalid credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s := newServer(t, service.Config{}, nil)
			before := s.snapshot(t)
			req, _ := http.NewRequest("POST", s.URL+"/login", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			r := s.send(t, req)
			is.Equal(r.status, tc.status)                       // status
			is.Equal(r.errorText(t), tc.msg)                    // message
			is.Equal(r.header.Get("Set-Cookie"), "")            // no cookie
			is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
			is.Equal(s.snapshot(t), before)                     // nothing stored changed
		})
	}
}

func TestLoginUnknownUserCostsTheSame(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	wrong := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`)
	n := s.hub.PasswordVerifications()
	unknown := s.do(t, "POST", "/login", `{"name":"eve","password":"wrong password"}`)
	is.Equal(s.hub.PasswordVerifications(), n+1)       // an unknown name is hashed too
	is.Equal(string(unknown.body), string(wrong.body)) // with the same answer
	is.Equal(unknown.status, wrong.status)             // and status
}

func TestLoginLimits(t *testing.T) {
	t.Run("per address", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, service.Config{}, nil, behindProxy)
		for range 5 {
			r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`)
			is.Equal(r.status, http.StatusUnauthorized) // failures within the budget
		}
		n := s.hub.PasswordVerifications()
		r := s.do(t, "POST", "/login", `{"name":"bob","password":"`+bobPassword+`"}`)
		is.Equal(r.status, http.StatusTooManyRequests)                              // the sixth attempt from the address
		is.Equal(r.errorText(t), "too many attempts — wait a minute and try again") // says when to retry
		is.Equal(r.header.Get("Retry-After"), "60")                                 // in seconds too
		is.Equal(s.hub.PasswordVerifications(), n)                                  // before any hash
		other := s.do(t, "POST", "/login", `{"name":"bob","password":"`+bobPassword+`"}`, "X-Forwarded-For", "192.0.2.7")
		is.Equal(other.status, http.StatusOK) // another client behind the loopback proxy is not limited
		s.secret(s.sessionOf(t, other))
		s.clock.Advance(61 * time.Second)
		r = s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`)
		is.Equal(r.status, http.StatusOK) // the window slides
		s.secret(s.sessionOf(t, r))
	})
	t.Run("per user name", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, service.Config{}, nil, behindProxy)
		for i := range 20 {
			addr := fmt.Sprintf("198.51.100.%d", i)
			r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`, "X-Forwarded-For", addr)
			is.Equal(r.status, http.StatusUnauthorized) // failures spread over addresses
		}
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "X-Forwarded-For", "203.0.113.1")
		is.Equal(r.status, http.StatusTooManyRequests) // the name slows down, from a fresh address too
		is.Equal(r.header.Get("Retry-After"), "1")     // for a second
		s.secret(s.login(t, "bob", bobPassword, "X-Forwarded-For", "203.0.113.1"))
		s.clock.Advance(time.Second)
		s.secret(s.login(t, "ann", annPassword, "X-Forwarded-For", "203.0.113.1")) // and then lets ann in
	})
	t.Run("per IPv6 /64", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, service.Config{}, nil, behindProxy)
		for i := range 5 {
			addr := fmt.Sprintf("2001:db8:1:2::%x", i+1)
			r := s.do(t, "POST", "/login", `{"name":"eve","password":"wrong password"}`, "X-Forwarded-For", addr)
			is.Equal(r.status, http.StatusUnauthorized) // failures from five addresses of one /64
		}
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "X-Forwarded-For", "2001:db8:1:2:ffff::6")
		is.Equal(r.status, http.StatusTooManyRequests) // a sixth address of the /64 shares their budget
		s.secret(s.login(t, "ann", annPassword, "X-Forwarded-For", "2001:db8:1:3::1"))
	})
}

func TestLoginForgedForwardedFor(t *testing.T) {
	t.Run("untrusted peer", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, service.Config{}, nil)
		// Without a trusted proxy the header is the client's own claim.
		for i := range 5 {
			r := s.do(t, "POST", "/login", `{"name":"eve","password":"wrong password"}`,
				"X-Forwarded-For", fmt.Sprintf("10.9.9.%d", i))
			is.Equal(r.status, http.StatusUnauthorized) // a failure
		}
		n := s.hub.PasswordVerifications()
		r := s.do(t, "POST", "/login", `{"name":"mallory","password":"wrong password"}`, "X-Forwarded-For", "10.9.9.99")
		is.Equal(r.status, http.StatusTooManyRequests) // a claimed address buys no new budget
		is.Equal(s.hub.PasswordVerifications(), n)     // nor hash work
	})
	is := is.New(t)
	s := newServer(t, service.Config{}, nil, behindProxy)
	// Only the last hop counts: earlier ones are what the client claimed.
	for i := range 5 {
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`,
			"X-Forwarded-For", fmt.Sprintf("10.9.9.%d, 192.0.2.1", i))
		is.Equal(r.status, http.StatusUnauthorized) // a failure
	}
	r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`, "X-Forwarded-For", "10.9.9.99, 192.0.2.1")
	is.Equal(r.status, http.StatusTooManyRequests) // forged first hops do not buy new budgets
}

// A body sent without Content-Type is read as JSON, as the conventions
// say; only another type is refused.
func TestLoginWithoutContentType(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	req, _ := http.NewRequest("POST", s.URL+"/login", strings.NewReader(`{"name":"ann","password":"`+annPassword+`"}`))
	r := s.send(t, req)
	is.Equal(r.status, http.StatusOK) // logged in
}
