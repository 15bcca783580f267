package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestLogin(t *testing.T) {
	is := is.New(t)
	s := newServer(t, hub.Config{}, nil)
	r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`","deviceLabel":"Ann's phone"}`)
	is.Equal(r.status, http.StatusOK) // login
	var res struct{ SessionID, User string }
	r.json(t, &res)
	s.secret(res.SessionID)
	is.Equal(res.User, "ann")                           // the user
	is.Equal(len(res.SessionID), 43)                    // 32 bytes, base64url
	is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
	cookies := (&http.Response{Header: r.header}).Cookies()
	is.Equal(len(cookies), 1) // one cookie
	c := cookies[0]
	is.Equal(c.Name, s.cookieName())                                                               // named after the port
	is.Equal(c.Value, res.SessionID)                                                               // holding the session id
	is.True(c.HttpOnly)                                                                            // out of scripts' reach
	is.Equal(c.SameSite, http.SameSiteLaxMode)                                                     // SameSite=Lax
	is.Equal(c.Path, "/")                                                                          // for the whole Hub
	is.True(!c.Secure)                                                                             // plain HTTP: not Secure
	is.Equal(c.MaxAge, 30*24*60*60)                                                                // as long as the session
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(res.SessionID)...).status, http.StatusOK) // the id is a bearer

	r = s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "X-Forwarded-Proto", "https")
	is.Equal(r.status, http.StatusOK)                               // login behind a TLS proxy
	is.True((&http.Response{Header: r.header}).Cookies()[0].Secure) // the proxy's word adds Secure
	s.secret(s.sessionOf(t, r))
}

// TestLoginOrderOfChecks copies the spec's order: origin 403, rate limit
// 429, body 400, credentials 401.
func TestLoginOrderOfChecks(t *testing.T) {
	is := is.New(t)
	s := newServer(t, hub.Config{}, nil)
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

	s2 := newServer(t, hub.Config{}, nil)
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
			s := newServer(t, hub.Config{}, nil)
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
	s := newServer(t, hub.Config{}, nil)
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
		s := newServer(t, hub.Config{}, nil, behindProxy)
		for range 5 {
			r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`)
			is.Equal(r.status, http.StatusUnauthorized) // failures within the budget
		}
		n := s.hub.PasswordVerifications()
		r := s.do(t, "POST", "/login", `{"name":"bob","password":"`+bobPassword+`"}`)
		is.Equal(r.status, http.StatusTooManyRequests)                              // the sixth attempt from the address
		is.Equal(r.errorText(t), "too many attempts — wait a minute and try again") // says when to retry
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
		s := newServer(t, hub.Config{}, nil, behindProxy)
		for i := range 20 {
			addr := fmt.Sprintf("198.51.100.%d", i)
			r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`, "X-Forwarded-For", addr)
			is.Equal(r.status, http.StatusUnauthorized) // failures spread over addresses
		}
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"`+annPassword+`"}`, "X-Forwarded-For", "203.0.113.1")
		is.Equal(r.status, http.StatusTooManyRequests) // the name's budget holds from a fresh address
		s.secret(s.login(t, "bob", bobPassword, "X-Forwarded-For", "203.0.113.1"))
	})
}

func TestLoginForgedForwardedFor(t *testing.T) {
	t.Run("untrusted peer", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, hub.Config{}, nil)
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
	s := newServer(t, hub.Config{}, nil, behindProxy)
	// Only the last hop counts: earlier ones are what the client claimed.
	for i := range 5 {
		r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`,
			"X-Forwarded-For", fmt.Sprintf("10.9.9.%d, 192.0.2.1", i))
		is.Equal(r.status, http.StatusUnauthorized) // a failure
	}
	r := s.do(t, "POST", "/login", `{"name":"ann","password":"wrong password"}`, "X-Forwarded-For", "10.9.9.99, 192.0.2.1")
	is.Equal(r.status, http.StatusTooManyRequests) // forged first hops do not buy new budgets
}
