package porttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// backendTimeout bounds every step of the Backend suite; real children
// under the race detector start in well under a second.
const backendTimeout = 30 * time.Second

// SessionAgent is the coding agent every session of a backend under the
// Backend suite knows (and the only one): the suite tells sessions its
// login changed, and reads its catalog revision in the inventory feed.
const SessionAgent = "scripted"

// Backend runs the hub.Backend contract against backends made by
// newBackend, which also returns an existing directory to run sessions in;
// their sessions know one coding agent, SessionAgent. The suite stops
// every session it starts.
func Backend(t *testing.T, newBackend func(t *testing.T) (b hub.Backend, dir string)) {
	start := func(t *testing.T, b hub.Backend, id, dir string) hub.WorkspaceSession {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		rs, err := b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: id, Path: dir})
		if err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		t.Cleanup(func() { stopSession(t, rs) })
		return rs
	}

	t.Run("StartThenFacts", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		name, onHost := strings.CutPrefix(b.Name(), "ssh:")
		is.True(b.Name() == "local" || onHost && name != "") // the backend's name: local, or ssh: and a host's
		rs := start(t, b, "alpha", dir)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		f, err := rs.Facts(ctx)
		is.NoErr(err)                        // a running session answers
		is.Equal(f.WorkspaceAPIRevision, 24) // at workspace revision 24
		is.Equal(len(f.Shells), 0)           // with no shells yet
		is.True(isOpen(rs.Done()))           // and keeps running
	})

	t.Run("DialSpeaksTheSessionProtocol", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		c := sessionClient(t, rs)
		var info struct {
			WorkspaceID          string `json:"workspaceId"`
			WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
		}
		resp := getJSON(t, c, "/s/alpha/api/session", &info)
		is.Equal(resp.StatusCode, http.StatusOK)               // the session endpoint answers
		is.Equal(info.WorkspaceID, "alpha")                    // for its workspace
		is.Equal(info.WorkspaceAPIRevision, 24)                // at revision 24
		is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached

		var facts struct {
			WorkspaceAPIRevision *int              `json:"workspaceApiRevision"`
			Shells               []json.RawMessage `json:"shells"`
		}
		resp = getJSON(t, c, "/_wharf/facts", &facts)
		is.Equal(resp.StatusCode, http.StatusOK)               // facts over the wire
		is.True(facts.WorkspaceAPIRevision != nil)             // carry the revision
		is.Equal(*facts.WorkspaceAPIRevision, 24)              // 24
		is.True(facts.Shells != nil && len(facts.Shells) == 0) // and an empty, non-null shell list

		var e struct {
			Error string `json:"error"`
		}
		resp = getJSON(t, c, "/s/alpha/api/nope", &e)
		is.Equal(resp.StatusCode, http.StatusNotFound)         // anything else is not found
		is.Equal(e.Error, "not found")                         // as a JSON error
		is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached
	})

	t.Run("StopEndsTheSession", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		is.NoErr(rs.Stop(ctx))      // stop
		is.True(!isOpen(rs.Done())) // Done is closed once Stop returns
		is.NoErr(rs.Stop(ctx))      // a second Stop is a no-op
		_, err := rs.Facts(ctx)
		is.True(err != nil) // an ended session gives no facts
		_, err = rs.Dial(ctx)
		is.True(err != nil) // nor connections

		again := start(t, b, "alpha", dir)
		_, err = again.Facts(ctx)
		is.NoErr(err) // the workspace starts again after a stop
	})

	t.Run("MissingDirectory", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		rs, err := b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: filepath.Join(dir, "missing")})
		is.True(err != nil)               // a missing folder does not start
		is.True(rs == nil)                // and gives no session
		is.True(hub.MessageOf(err) != "") // with a public reason

		rs = start(t, b, "alpha", dir)
		_, err = rs.Facts(ctx)
		is.NoErr(err) // nothing left behind blocks the next start
	})

	t.Run("TwoSessionsAtOnce", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		var wg sync.WaitGroup
		sessions := make([]hub.WorkspaceSession, 2)
		errs := make([]error, 2)
		for i, id := range []string{"alpha", "beta"} {
			wg.Go(func() { sessions[i], errs[i] = b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: id, Path: dir}) })
		}
		wg.Wait()
		for i, rs := range sessions {
			if rs != nil {
				t.Cleanup(func() { stopSession(t, rs) })
			}
			is.NoErr(errs[i]) // both start, at the same time
		}
		a, bs := sessions[0], sessions[1]
		var info struct {
			WorkspaceID string `json:"workspaceId"`
		}
		getJSON(t, sessionClient(t, bs), "/s/beta/api/session", &info)
		is.Equal(info.WorkspaceID, "beta") // each session is its own

		is.NoErr(a.Stop(ctx)) // stopping one
		_, err := bs.Facts(ctx)
		is.NoErr(err)              // leaves the other answering
		is.True(isOpen(bs.Done())) // and running
	})

	t.Run("ConcurrentCalls", func(t *testing.T) {
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		c := sessionClient(t, rs)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
				defer cancel()
				if _, err := rs.Facts(ctx); err != nil {
					t.Errorf("facts: %v", err)
				}
				var info struct{}
				if _, err := fetchJSON(c, "/s/alpha/api/session", &info); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	})

	feeds(t, newBackend, start)
	notifications(t, newBackend, start)
	agentLogins(t, newBackend, start)

	t.Run("RemoveWorkspaceData", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		err := b.RemoveWorkspaceData(t.Context(), "alpha")
		is.Equal(hub.KindOf(err), hub.Conflict) // never under a running session
		stopSession(t, rs)
		is.NoErr(b.RemoveWorkspaceData(t.Context(), "alpha")) // once it has stopped
		is.NoErr(b.RemoveWorkspaceData(t.Context(), "alpha")) // and again: nothing there is no failure
		is.NoErr(b.RemoveWorkspaceData(t.Context(), "never")) // nor for a workspace never started
		rs = start(t, b, "alpha", dir)
		is.True(isOpen(rs.Done())) // the workspace starts afresh
	})

	t.Run("CancelledContext", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		rs, err := b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir})
		is.True(err != nil)                       // an already cancelled start fails
		is.True(errors.Is(err, context.Canceled)) // with the context's error
		is.True(rs == nil)                        // and gives no session

		rs = start(t, b, "alpha", dir)
		is.True(isOpen(rs.Done())) // nothing left behind blocks the next start
	})
}

// stopSession stops rs at the end of a test, failing the test when it
// cannot.
func stopSession(t *testing.T, rs hub.WorkspaceSession) {
	ctx, cancel := context.WithTimeout(context.Background(), backendTimeout)
	defer cancel()
	if err := rs.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// isOpen reports whether ch is still open, without waiting.
func isOpen(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// sessionClient is an HTTP client whose every connection is rs.Dial, as
// the Hub's reverse proxy reaches a session.
func sessionClient(t *testing.T, rs hub.WorkspaceSession) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return rs.Dial(ctx) },
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: backendTimeout}
}

// getJSON sends GET path through c and decodes the JSON answer into v.
func getJSON(t *testing.T, c *http.Client, path string, v any) *http.Response {
	t.Helper()
	resp, err := fetchJSON(c, path, v)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// fetchJSON is getJSON for any goroutine: it reports what went wrong.
func fetchJSON(c *http.Client, path string, v any) (*http.Response, error) {
	resp, err := c.Get("http://session" + path)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return resp, fmt.Errorf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp, fmt.Errorf("GET %s: decode: %w", path, err)
	}
	return resp, nil
}

// agentLogins runs the WorkspaceSession.AgentLoginChanged part of the
// Backend contract.
func agentLogins(t *testing.T, newBackend func(t *testing.T) (hub.Backend, string),
	start func(t *testing.T, b hub.Backend, id, dir string) hub.WorkspaceSession) {
	// catalog reads the next inventory tick's revision of SessionAgent.
	catalog := func(t *testing.T, f hub.Feed) string {
		t.Helper()
		fr := firstFrame(t, f)
		var tick struct {
			Type     string            `json:"type"`
			Catalogs map[string]string `json:"catalogs"`
		}
		if err := json.Unmarshal(fr.Data, &tick); err != nil || tick.Type != "conversation.inventory" {
			t.Fatalf("%s is no inventory tick (%v)", fr.Data, err)
		}
		if tick.Catalogs[SessionAgent] == "" {
			t.Fatalf("the tick %s has no catalog revision of %s", fr.Data, SessionAgent)
		}
		return tick.Catalogs[SessionAgent]
	}
	tell := func(t *testing.T, rs hub.WorkspaceSession, agent string) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		return rs.AgentLoginChanged(ctx, agent)
	}

	t.Run("AgentLoginChangedMovesTheAgentsCatalog", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openFeed(t, rs, hub.FeedRequest{Topic: hub.TopicInventory})
		first := catalog(t, f)
		is.NoErr(tell(t, rs, "no-such-agent")) // an agent the session does not know is no change
		is.NoErr(tell(t, rs, ""))              // nor is no agent
		is.NoErr(tell(t, rs, SessionAgent))    // the session takes the change
		second := catalog(t, f)
		is.True(second != first)            // the next tick moved the agent's catalog, and only that change ticked
		is.NoErr(tell(t, rs, SessionAgent)) // and again
		is.True(catalog(t, f) != second)    // it moves every time
		is.True(isOpen(rs.Done()))          // the session runs on
	})

	t.Run("AgentLoginChangedOfAnEndedSessionIsUnavailable", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		stopSession(t, rs)
		is.Equal(hub.KindOf(tell(t, rs, SessionAgent)), hub.Unavailable) // an ended session takes nothing
	})

	t.Run("AgentLoginChangedEndsWithItsContext", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		is.Equal(hub.KindOf(rs.AgentLoginChanged(ctx, SessionAgent)), hub.Unavailable) // not within its context
		is.NoErr(tell(t, rs, SessionAgent))                                            // the session still takes the next
	})
}
