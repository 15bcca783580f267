package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const testPassword = "correct horse battery staple"

// loginHub is a Hub with a login for ann, a logout, and a live stream
// served by live.
func loginHub(t *testing.T, live http.HandlerFunc) (srv *httptest.Server, logouts chan string) {
	logouts = make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name        string `json:"name"`
			Password    string `json:"password"`
			DeviceLabel string `json:"deviceLabel"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields() // LoginRequest is closed
		if r.Header.Get("Content-Type") != "application/json" || dec.Decode(&req) != nil || req.DeviceLabel == "" {
			fail(w, http.StatusBadRequest, "invalid login request")
			return
		}
		if req.Name != "ann" || req.Password != testPassword {
			fail(w, http.StatusUnauthorized, "invalid name or password")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"sessionId": testToken, "user": "ann"})
	})
	mux.HandleFunc("POST /logout", func(w http.ResponseWriter, r *http.Request) {
		logouts <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]bool{"revoked": true})
	})
	mux.HandleFunc("GET /api/hub/live", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			fail(w, http.StatusUnauthorized, "authentication required")
			return
		}
		live(w, r)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, logouts
}

func testConfig(hub string) config {
	return config{hub: hub, user: "ann", password: testPassword, ws: testWS, docKey: testDocKey}
}

// TestRun: log in, follow the stream until cancelled, sign out; neither the
// password nor the session id is ever printed.
func TestRun(t *testing.T) {
	is := is.New(t)
	subs := make(chan string, 4)
	srv, logouts := loginHub(t, func(w http.ResponseWriter, r *http.Request) {
		subs <- r.URL.Query().Get("subs")
		openStream(w)
		send(w, helloFrame("s1"), activityData(testWS, "a.1"), docSnapshot("e.1", 1))
		hold(r)
	})
	out := make(lines, 100)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, testConfig(srv.URL), srv.Client(), out) }()

	is.Equal(recv(t, subs), subsWith("")) // the stream carries the -doc-key subscription

	var got []string
	for !strings.Contains(strings.Join(got, "\n"), "topic=document") {
		got = append(got, recv(t, out))
	}
	cancel()
	is.NoErr(recv(t, done))                         // cancellation ends it cleanly
	is.Equal(recv(t, logouts), "Bearer "+testToken) // and signs the session out
	got = append(got, out.drain()...)

	is.Equal(got[0], "logged in as ann")                       // login is reported
	is.Equal(got[1], `hello: streaming workspace "myproject"`) // then the hello
	is.Equal(got[len(got)-1], "signed out")                    // and the sign-out
	for _, line := range got {
		is.True(!strings.Contains(line, testPassword)) // the password is never printed
		is.True(!strings.Contains(line, testToken))    // nor the session id
	}
}

func TestRunWrongPassword(t *testing.T) {
	is := is.New(t)
	srv, logouts := loginHub(t, func(w http.ResponseWriter, r *http.Request) {
		t.Error("the stream was opened without a session")
	})
	cfg := testConfig(srv.URL)
	cfg.password = "wrong"
	err := run(t.Context(), cfg, srv.Client(), make(lines, 100))
	is.True(err != nil)                                                                   // the login fails
	is.True(strings.HasPrefix(err.Error(), "wrong user name or password"))                // saying why
	is.Equal(statusCode(err), http.StatusUnauthorized)                                    // with the Hub's status
	is.True(strings.Contains(err.Error(), `POST /login: 401 "invalid name or password"`)) // and message
	is.Equal(len(logouts), 0)                                                             // there is nothing to sign out
}

func TestRunSessionGone(t *testing.T) {
	is := is.New(t)
	srv, logouts := loginHub(t, func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusUnauthorized, "authentication required")
	})
	err := run(t.Context(), testConfig(srv.URL), srv.Client(), make(lines, 100))
	is.True(errors.Is(err, errDeviceSessionGone)) // a 401 ends the program: the session is gone
	is.Equal(len(logouts), 0)                     // and is not signed out again
}

func TestConfigCheck(t *testing.T) {
	good := testConfig("http://127.0.0.1:4700")
	tests := []struct {
		name   string
		change func(*config)
		args   []string
		want   string // "" for no error
	}{
		{name: "good", change: func(*config) {}},
		{name: "https", change: func(c *config) { c.hub = "https://hub.example:4700/" }},
		{name: "arguments", change: func(*config) {}, args: []string{"extra"}, want: "unexpected arguments"},
		{name: "no user", change: func(c *config) { c.user = "" }, want: "-user is required"},
		{name: "no password", change: func(c *config) { c.password = "" }, want: "set WHARF_PASSWORD"},
		{name: "no workspace", change: func(c *config) { c.ws = "" }, want: "-ws is required"},
		{name: "long workspace", change: func(c *config) { c.ws = strings.Repeat("w", 257) }, want: "-ws is longer"},
		{name: "long key", change: func(c *config) { c.docKey = strings.Repeat("k", 4097) }, want: "-doc-key is longer"},
		{name: "hub without scheme", change: func(c *config) { c.hub = "127.0.0.1:4700" }, want: "is not an http"},
		{name: "hub of another scheme", change: func(c *config) { c.hub = "ftp://hub" }, want: "is not an http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			cfg := good
			tt.change(&cfg)
			err := cfg.check(tt.args)
			if tt.want == "" {
				is.NoErr(err) // a usable command line
				return
			}
			is.True(err != nil)                                   // refused
			is.True(strings.Contains(err.Error(), tt.want))       // saying what is wrong
			is.True(!strings.Contains(err.Error(), testPassword)) // never echoing the password
		})
	}
}
