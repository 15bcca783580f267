package shells

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/matryer/is"
)

func TestBadClientMessagesCloseTheAttachment(t *testing.T) {
	r, srv := newTestRegistry(t, Options{})
	in, err := r.Create("", 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		msg  string
		code websocket.StatusCode
	}{
		{"a binary message", websocket.MessageBinary, `{"type":"input","data":"ls\n"}`, websocket.StatusUnsupportedData},
		{"malformed JSON", websocket.MessageText, `{"type":`, websocket.StatusUnsupportedData},
		{"an unknown type", websocket.MessageText, `{"type":"paste","data":"x"}`, websocket.StatusUnsupportedData},
		{"an unknown field", websocket.MessageText, `{"type":"input","data":"x","echo":true}`, websocket.StatusUnsupportedData},
		{"a resize too large", websocket.MessageText, `{"type":"resize","cols":1001,"rows":5}`, websocket.StatusUnsupportedData},
		{"an ack beyond the output", websocket.MessageText, `{"type":"ack","offset":99999999}`, websocket.StatusUnsupportedData},
		{"a message over 64 KiB", websocket.MessageText, `{"type":"input","data":"` + strings.Repeat("a", MaxClientMessage) + `"}`, websocket.StatusMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			tm := attach(t, srv, in.ID, "", true)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			is.NoErr(tm.conn.Write(ctx, tc.typ, []byte(tc.msg))) // the message is sent
			is.Equal(tm.readClose(), tc.code)                    // the attachment is closed with the code
		})
	}
	t.Run("and the shell lives on", func(t *testing.T) {
		is := is.New(t)
		tm := attach(t, srv, in.ID, "", true)
		tm.input("echo alive-$((2*4))\n")
		is.True(tm.see("alive-8")) // the shell still answers
	})
}

func TestAttachingIsRefusedBeforeTheUpgrade(t *testing.T) {
	r, srv := newTestRegistry(t, Options{})
	in, err := r.Create("", 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	for _, tc := range []struct {
		name, path string
		header     http.Header
		status     int
		msg        string
	}{
		{"an unknown shell", "/s404", upgrade, 404, "unknown shell"},
		{"a negative offset", "/" + in.ID + "?offset=-1", upgrade, 400, "offset is a byte offset: a non-negative integer"},
		{"an offset that is no number", "/" + in.ID + "?offset=x", upgrade, 400, "offset is a byte offset: a non-negative integer"},
		{"an offset given twice", "/" + in.ID + "?offset=1&offset=2", upgrade, 400, "offset is a byte offset: a non-negative integer"},
		{"no upgrade", "/" + in.ID, http.Header{}, 400, "not a WebSocket upgrade"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+tc.path, nil)
			req.Header = tc.header
			resp, err := http.DefaultClient.Do(req)
			is.NoErr(err) // the request is answered
			defer resp.Body.Close()
			is.Equal(resp.StatusCode, tc.status)                          // with the status
			is.Equal(resp.Header.Get("Cache-Control"), "no-store")        // not cached
			is.Equal(resp.Header.Get("Content-Type"), "application/json") // as JSON
			body, _ := io.ReadAll(resp.Body)
			is.Equal(string(body), `{"error":"`+tc.msg+`"}`+"\n") // with the message
		})
	}
}

func TestClosingAShellClosesItsClientsAndIgnoresTheirLateInput(t *testing.T) {
	is := is.New(t)
	r, srv := newTestRegistry(t, Options{})
	in, err := r.Create("", 80, 24)
	is.NoErr(err) // the shell starts
	s, _ := r.get(in.ID)
	tm := attach(t, srv, in.ID, "", true)
	c := onlyClient(t, s)
	is.NoErr(r.Remove(in.ID))                                         // the shell is closed
	is.Equal(tm.readClose(), websocket.StatusNormalClosure)           // its client is closed
	is.Equal(tm.reason, "shell closed")                               // saying why
	within(t, s.gone, "the shell's process gone")                     // its process is hung up
	is.True(c.handle(ClientMessage{Type: TypeInput, Data: "late\n"})) // late input is taken
	is.Equal(len(s.in), 0)                                            // and dropped
}
