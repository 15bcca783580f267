package daemontest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestSecretsFindsLeaks runs the harness over a server that leaks on
// purpose, in every place and encoding it scans, and over the places a
// secret is allowed: each leak must be reported, once, and nothing else.
func TestSecretsFindsLeaks(t *testing.T) {
	is := is.New(t)
	const session = "Xq3vB7-session-id-of-43-characters-aaaaaaaa"
	const password = `pa"ss\word/with escapes`
	jsonPassword, _ := json.Marshal(password)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login": // issues the session: allowed here
			http.SetCookie(w, &http.Cookie{Name: "wharf_hub", Value: session})
			fmt.Fprintf(w, `{"sessionId":%q}`, session)
		case "/header":
			w.Header().Set("X-Debug", base64.StdEncoding.EncodeToString([]byte(session)))
		case "/json":
			fmt.Fprintf(w, `{"error":"bad password %s"}`, jsonPassword[1:len(jsonPassword)-1])
		case "/unread": // a body the client never reads
			io.WriteString(w, "token="+session)
		case "/basic": // inside a longer base64 text, at an offset of 1 mod 3
			w.Header().Set("X-Echo", "Basic "+base64.StdEncoding.EncodeToString([]byte("ann:"+session)))
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": open\n\nevent: hello\ndata: {}\n\nevent: live\ndata: %s\n\n", session)
		}
	}))
	defer srv.Close()
	sec := NewSecrets()
	c := &Client{HTTP: sec.Client(), Base: srv.URL + "/"}
	ctx := t.Context()

	resp, err := c.Request(ctx, "POST", "login", nil)
	is.NoErr(err) // logged in
	resp.Body.Close()
	sec.Register("session id", session, InResponse(resp))
	sec.Register("password", password, InFile("first-user-password"))
	sec.Register("unused", "a secret nothing ever shows")
	sec.Register("empty", "") // ignored

	for _, p := range []string{"header", "json"} {
		_, _, err := c.Do(ctx, "GET", p, nil, nil)
		is.NoErr(err) // answered
	}
	resp, err = c.Request(ctx, "GET", "unread", nil)
	is.NoErr(err) // answered, and closed unread
	resp.Body.Close()
	resp, err = c.Request(ctx, "GET", "stream", nil)
	is.NoErr(err) // a stream
	events := ReadSSE(resp.Body)
	ev, err := events.Until(ctx, func(e Event) bool { return e.Name == "live" })
	is.NoErr(err)              // its frame
	is.Equal(ev.Data, session) // read
	resp.Body.Close()
	_, _, err = c.Do(ctx, "GET", "basic", nil, nil)
	is.NoErr(err) // answered

	fmt.Fprintf(sec.Log("wharf serve"), "level=DEBUG msg=request query=password=%s\n", url.QueryEscape(password))
	fmt.Fprintf(sec.Log("wharf serve"), "level=INFO msg=fine\n")
	dir := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(dir, "first-user-password"), []byte(password+"\n"), 0o600))
	is.NoErr(os.Mkdir(filepath.Join(dir, "sessions"), 0o700))
	is.NoErr(os.WriteFile(filepath.Join(dir, "sessions", "x.db"), []byte("\x00\x01"+session[:20]+"|"+session+"\x00"), 0o600))
	files, err := sec.ScanStateDir(dir, "in the test")
	is.NoErr(err)                                                                       // scanned
	is.Equal(files, []string{"first-user-password", filepath.Join("sessions", "x.db")}) // every file

	var got []string
	for _, l := range sec.Leaks() {
		got = append(got, l.String())
	}
	want := []string{
		"session id leaked to the headers of answer 2 (GET /header, 200) (base64)",
		"password leaked to the body of answer 3 (GET /json, 200) (json)",
		"session id leaked to the body of answer 4 (GET /unread, 200) (raw)",
		"session id leaked to the body of answer 5 (GET /stream, 200) (raw)",
		"session id leaked to the headers of answer 6 (GET /basic, 200) (base64 at offset 1)",
		"password leaked to the log of wharf serve (url)",
		"session id leaked to the state directory's sessions/x.db (scan 1, in the test) (raw)",
	}
	slices.Sort(got)
	slices.Sort(want)
	is.Equal(got, want) // every leak, and only the leaks
	is.Equal(sec.Found("password"), []string{"the body of answer 3 (GET /json, 200)", "the log of wharf serve",
		"the state directory's first-user-password (scan 1, in the test)"}) // Found lists the allowed place too
	is.Equal(len(sec.Found("session id")), 7) // the login's headers and body, and the five leaks
	is.Equal(len(sec.Found("unused")), 0)     // a secret shown nowhere is found nowhere
}

func TestPrefix(t *testing.T) {
	is := is.New(t)
	is.Equal(prefix("short"), "5 bytes")                                         // a short secret shows nothing
	is.Equal(prefix("abcdefghijklmnopqrstuvwxyz"), `26 bytes, starting "abcd"…`) // a long one, four bytes
}

func TestSSE(t *testing.T) {
	is := is.New(t)
	body := ": open\n\nevent: hello\ndata: {\"a\":1}\n\ndata: one\ndata: two\nid: 7\n\n: keepalive\n\nevent: tail"
	r := ReadSSE(strings.NewReader(body))
	ctx := context.Background()
	ev, err := r.Next(ctx)
	is.NoErr(err)                                       // first event
	is.Equal(ev, Event{Name: "hello", Data: `{"a":1}`}) // named, with its data
	ev, err = r.Next(ctx)
	is.NoErr(err)                                  // second event
	is.Equal(ev, Event{Data: "one\ntwo", ID: "7"}) // data lines joined, id kept
	_, err = r.Next(ctx)
	is.Equal(err, ErrStreamEnded)                                  // comments are no events; an unfinished one is dropped
	is.NoErr(ReadSSE(strings.NewReader("data: x\n\n")).Ended(ctx)) // Ended skips to the end
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	is.True(ReadSSE(pr).Ended(cancelled) != nil) // a stream still open when ctx ends
}
