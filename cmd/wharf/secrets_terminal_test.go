package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// exerciseTerminal is the terminal's part of the scenario: a shell of the
// workspace is opened and attached through the Hub, and a secret is typed
// into it the way a person answers a password prompt (echo off), then
// proven to have arrived by its digest in the shell's output. The secret
// may be nowhere the harness looks: no log line, no live frame, no file of
// the state directory (the scrollback is memory only). The terminal's
// own WebSocket is not recorded: it is the person's screen.
func exerciseTerminal(ctx context.Context, t *testing.T, sec *daemontest.Secrets, c *daemontest.Client, ws string) {
	t.Helper()
	is := is.New(t)
	secret := "typed-" + rand.Text()
	sec.Register("a secret typed into a shell", secret)
	var sh struct {
		ID string `json:"id"`
	}
	status, _, err := c.Do(ctx, "POST", "s/"+ws+"/api/shells", map[string]any{"label": "secrets"}, &sh)
	is.NoErr(err)                        // answered
	is.Equal(status, http.StatusCreated) // a shell is opened

	url := "ws" + strings.TrimPrefix(c.Base, "http") + "s/" + ws + "/api/shells/" + sh.ID + "/attach"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.Token}}})
	is.NoErr(err) // attached through the Hub
	defer conn.CloseNow()
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		is.NoErr(conn.Write(ctx, websocket.MessageText, b)) // sent
	}
	var screen bytes.Buffer
	until := func(want string) {
		for !strings.Contains(screen.String(), want) {
			typ, b, err := conn.Read(ctx)
			is.NoErr(err) // the shell answers
			if typ == websocket.MessageBinary {
				screen.Write(b)
				send(map[string]any{"type": "ack", "offset": screen.Len()})
			}
		}
	}
	// The prompt's marker is split by quotes in the typed line, so its
	// echo does not count: the shell printed it, with echo off.
	send(map[string]any{"type": "input", "data": "stty -echo; echo PRO''MPT; read -r answer; stty echo; printf '%s' \"$answer\" | sha256sum\n"})
	until("PROMPT")
	send(map[string]any{"type": "input", "data": secret + "\n"})
	sum := sha256.Sum256([]byte(secret))
	until(hex.EncodeToString(sum[:]))                   // the shell read the secret
	is.True(!strings.Contains(screen.String(), secret)) // never echoed

	status, _, err = c.Do(ctx, "DELETE", "s/"+ws+"/api/shells/"+sh.ID, nil, nil)
	is.NoErr(err)                          // answered
	is.Equal(status, http.StatusNoContent) // the shell is closed
}
