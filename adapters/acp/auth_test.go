package acp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/hub/chat"
)

// TestAgentKey: an agent advertising a login with a key in its
// environment is authenticated with the key the runtime gives it, and
// only it; a refused key is a login the agent still needs; the key never
// appears in an error or the log.
func TestAgentKey(t *testing.T) {
	const secret = "k3y-that-must-not-leak"
	for _, tc := range []struct {
		name     string
		agentEnv map[string][]string
		startErr error // of Start
		newErr   error // of NewSession, once started
	}{
		{"no key", nil, nil, chat.ErrAgentLoginRequired},
		{"key", map[string][]string{"scripted": {"FAKE_KEY=" + secret}}, nil, nil},
		{"key of another agent", map[string][]string{"other": {"FAKE_KEY=" + secret}}, nil, chat.ErrAgentLoginRequired},
		{"empty key", map[string][]string{"scripted": {"FAKE_KEY="}}, nil, chat.ErrAgentLoginRequired},
		{"refused key", map[string][]string{"scripted": {"FAKE_KEY=refused"}}, chat.ErrAgentLoginRequired, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var logs bytes.Buffer
			rt := acp.New(acp.Options{Env: env(), AgentEnv: tc.agentEnv,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Commands: map[string][]string{
					"scripted": {agentBin(t), "--state", t.TempDir(), "--auth-required", "--key-var", "FAKE_KEY"},
				}})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			dir := t.TempDir()
			conn, err := rt.Start(ctx, "scripted", dir, func(string, chat.AgentUpdate) {})
			if tc.startErr != nil {
				is.True(errors.Is(err, tc.startErr))            // Start says why
				is.True(strings.Contains(err.Error(), "(key)")) // naming the method
				return
			}
			is.NoErr(err) // the agent starts
			defer conn.Close()
			st, err := conn.NewSession(ctx, dir)
			if tc.newErr != nil {
				is.True(errors.Is(err, tc.newErr)) // a session needs the login
			} else {
				is.NoErr(err)               // a session opens
				is.True(st.SessionID != "") // with an id
			}
			is.NoErr(conn.Close())                            // the agent goes
			is.True(!strings.Contains(logs.String(), secret)) // the key is never logged
		})
	}
}
