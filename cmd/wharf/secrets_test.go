package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/fakes/pushservice"
)

// TestSecretExposure runs a whole scenario through the real `wharf serve`
// binary (debug logs on) and a real `wharf session` child, records every
// answer (live-stream frames included), every log line and every file of
// the state directory, and fails if a secret it learned appears anywhere
// it does not belong: the first user's password (only in the file meant
// to hand it over, which the scenario then deletes), a mistyped password,
// every session id (only in the login answer that issued it), and the new
// password set with `wharf user passwd`, every passphrase, private key
// and token the credentials family is given, an answer typed into a
// clone's terminal, every key, code and address given to an agent's
// login, a push subscription's endpoint and keys, the Hub's VAPID
// private key and a secret typed into a shell. The state directory's modes are
// checked while a workspace session's socket exists and after shutdown.
// A family adds its secrets with one sec.Register line where it learns
// them.
func TestSecretExposure(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	sec := daemontest.NewSecrets()
	tmp := t.TempDir()
	stateDir := filepath.Join(tmp, "state")
	repo := filepath.Join(tmp, "src", "project")
	is.NoErr(os.MkdirAll(repo, 0o755)) // the workspace folder, which the Hub will git init

	agents, err := agentLoginBin()
	is.NoErr(err) // the fake login programs build
	push := pushservice.New(t, pushservice.Options{})
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: stateDir,
		Args: append([]string{"--log-level", "debug"}, pushArgs(t, push, tmp)...), Log: sec.Log("wharf serve"),
		Env: []string{"PATH=" + agents + string(os.PathListSeparator) + os.Getenv("PATH")}})
	is.NoErr(err) // the daemon serves
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })

	// The first user's password: in its file, and only there.
	password, err := d.FirstUserPassword()
	is.NoErr(err) // the banner names the file, which holds the password
	sec.Register("first-user password", password, daemontest.InFile(daemontest.FirstPasswordFile))
	_, err = sec.ScanStateDir(stateDir, "at the first start")
	is.NoErr(err)                                                       // the state directory is read
	is.NoErr(os.Remove(filepath.Join(stateDir, "first-user-password"))) // deleted, as the banner asks

	hc := sec.Client()
	anon := &daemontest.Client{HTTP: hc, Base: d.URL()}
	mistyped := password + "x"
	sec.Register("mistyped password", mistyped)
	status, _, err := anon.Do(ctx, "POST", "login", map[string]string{"name": daemontest.FirstUser, "password": mistyped}, nil)
	is.NoErr(err)                             // answered
	is.Equal(status, http.StatusUnauthorized) // a wrong password is refused

	// Three device sessions: one to work with, one to revoke, one to log out.
	login := func(name, password string) *daemontest.Client {
		c, resp, err := daemontest.Login(ctx, hc, d.URL(), daemontest.FirstUser, password)
		is.NoErr(err) // the first user logs in
		sec.Register(name, c.Token, daemontest.InResponse(resp))
		return c
	}
	owner, revoked, loggedOut := login("session id (main)", password),
		login("session id (revoked)", password), login("session id (logged out)", password)

	var sessions struct {
		Sessions []deviceSessionView `json:"sessions"`
	}
	status, _, err = revoked.Do(ctx, "GET", "api/hub/sessions", nil, &sessions)
	is.NoErr(err)                       // the device sessions are listed
	is.Equal(status, http.StatusOK)     // to their user
	is.Equal(len(sessions.Sessions), 3) // all three
	i := slices.IndexFunc(sessions.Sessions, func(s deviceSessionView) bool { return s.Current })
	is.True(i >= 0) // the caller's own is marked current
	revokedHandle := sessions.Sessions[i].Handle

	// A workspace registered and started: a real `wharf session` child.
	var ws struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	status, body, err := owner.Do(ctx, "POST", "api/hub/workspaces", map[string]any{"path": repo, "init": true, "start": true}, &ws)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // registered
	is.True(ws.Running)             // and running
	t.Logf("registered: %s", body)

	// The live stream: activity and a document subscription.
	subs := url.QueryEscape(`[{"topic":"document"}]`)
	resp, err := owner.Request(ctx, "GET", "api/hub/live?activity=1&ws="+ws.ID+"&subs="+subs, nil)
	is.NoErr(err) // the stream opens
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // with 200
	live := daemontest.ReadSSE(resp.Body)
	_, err = live.Until(ctx, func(e daemontest.Event) bool { return e.Name == "hello" })
	is.NoErr(err) // hello
	_, err = live.Until(ctx, liveEvent("activity", "data", `"running":true`))
	is.NoErr(err) // the workspace runs
	_, err = live.Until(ctx, liveEvent("document", "data", `"kind":"snapshot"`))
	is.NoErr(err) // a document snapshot
	_, err = live.Until(ctx, liveEvent("document", "ready", ""))
	is.NoErr(err) // ready
	is.NoErr(os.WriteFile(filepath.Join(repo, "notes.md"), []byte("# notes\n"), 0o644))
	_, err = live.Until(ctx, liveEvent("document", "data", "notes.md"))
	is.NoErr(err) // a patch names the saved file

	status, _, err = owner.Do(ctx, "POST", "api/hub/workspaces/"+ws.ID+"/display-name", map[string]string{"displayName": "Secret project"}, nil)
	is.NoErr(err)                   // answered
	is.Equal(status, http.StatusOK) // the display name changes

	exerciseCredentials(ctx, t, sec, owner, ws.ID)
	exerciseClone(ctx, t, sec, owner, filepath.Dir(repo))
	exerciseWorktrees(ctx, t, sec, owner, ws.ID, repo)
	exerciseAgentAccounts(ctx, t, sec, owner)
	exercisePush(ctx, t, sec, owner, push, stateDir, ws.ID)
	exerciseTerminal(ctx, t, sec, owner, ws.ID)
	for _, op := range []string{"stop", "start"} { // the session is given its credentials
		status, _, err = owner.Do(ctx, "POST", "api/hub/sessions/"+ws.ID+"/"+op, nil, nil)
		is.NoErr(err)                   // answered
		is.Equal(status, http.StatusOK) // the workspace restarts
	}

	// While the workspace runs: its socket exists, the WAL holds the recent writes.
	checked := daemontest.CheckModes(t, stateDir)
	is.True(slices.ContainsFunc(checked, func(c string) bool { return strings.HasPrefix(c, "sessions/") && strings.Contains(c, ".sock S") })) // the session's socket was checked
	files, err := sec.ScanStateDir(stateDir, "while a workspace runs")
	is.NoErr(err)                                   // the state directory is read
	is.True(slices.Contains(files, "wharf.db-wal")) // the write-ahead log included

	for _, op := range []string{"stop", "start"} {
		status, _, err = owner.Do(ctx, "POST", "api/hub/sessions/"+ws.ID+"/"+op, nil, nil)
		is.NoErr(err)                   // answered
		is.Equal(status, http.StatusOK) // the workspace stops, then starts again
	}

	var revocation struct{ Revoked, Current bool }
	status, _, err = owner.Do(ctx, "POST", "api/hub/sessions/"+revokedHandle+"/revoke", nil, &revocation)
	is.NoErr(err)                                                                     // answered
	is.Equal(status, http.StatusOK)                                                   // the other device's session is revoked
	is.True(revocation.Revoked && !revocation.Current)                                // and it was not the caller's
	is.Equal(authStatus(ctx, t, hc, d.URL(), revoked.Token), http.StatusUnauthorized) // it no longer authenticates
	status, _, err = loggedOut.Do(ctx, "POST", "logout", nil, nil)
	is.NoErr(err)                                                                       // answered
	is.Equal(status, http.StatusOK)                                                     // logged out
	is.Equal(authStatus(ctx, t, hc, d.URL(), loggedOut.Token), http.StatusUnauthorized) // it no longer authenticates

	// A new password, set beside the running daemon, ends every session of the user.
	newPassword := rand.Text()
	sec.Register("new password", newPassword)
	cmd := d.Command(ctx, "user", "passwd", daemontest.FirstUser, "--password-stdin")
	cmd.Stdin = strings.NewReader(newPassword + "\n")
	cmd.Stdout, cmd.Stderr = sec.Log("wharf user passwd"), sec.Log("wharf user passwd")
	is.NoErr(cmd.Run())                                                             // the password changes
	is.Equal(authStatus(ctx, t, hc, d.URL(), owner.Token), http.StatusUnauthorized) // the daemon ended the session at once
	is.NoErr(live.Ended(ctx))                                                       // and its live stream
	_, _, err = daemontest.Login(ctx, hc, d.URL(), daemontest.FirstUser, password)
	is.True(err != nil) // the old password no longer logs in
	again := login("session id (after the password change)", newPassword)
	is.Equal(authStatus(ctx, t, hc, d.URL(), again.Token), http.StatusOK) // the new one does

	is.NoErr(d.Stop(ctx)) // a graceful shutdown
	daemontest.CheckModes(t, stateDir)
	files, err = sec.ScanStateDir(stateDir, "after a graceful shutdown")
	is.NoErr(err)                               // the state directory is read
	is.True(slices.Contains(files, "wharf.db")) // the database was scanned

	sec.Check(t)
	is.Equal(sec.Found("first-user password"), []string{"the state directory's first-user-password (scan 1, at the first start)"}) // the password was in its file, and nowhere else
	is.True(len(sec.Found("session id (main)")) > 0)                                                                               // the scan sees a session id where it was issued
}

// deviceSessionView is one device session of GET /api/hub/sessions.
type deviceSessionView struct {
	Handle  string `json:"handle"`
	Current bool   `json:"current"`
}

// liveEvent accepts a live envelope of topic whose event is of kind and
// whose data holds has.
func liveEvent(topic, kind, has string) func(daemontest.Event) bool {
	return func(e daemontest.Event) bool {
		var env struct {
			Topic string
			Event struct {
				Kind string
				Data json.RawMessage
			}
		}
		return e.Name == "live" && json.Unmarshal([]byte(e.Data), &env) == nil &&
			env.Topic == topic && env.Event.Kind == kind && strings.Contains(string(env.Event.Data), has)
	}
}
