package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestLiveStreamEndToEnd follows a real workspace through the live stream
// of a real daemon: the child's document feed, relayed by the Hub, gives a
// snapshot and then a patch naming a saved file; activity says the
// workspace runs; stopping the session makes the document subscription
// unavailable, and starting it again brings a fresh snapshot and, once the
// new child has indexed the folder, the saved file.
func TestLiveStreamEndToEnd(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	home, dir := t.TempDir(), stateDir(t)
	repo := filepath.Join(t.TempDir(), "notes")
	is.NoErr(os.Mkdir(repo, 0o755)) // the workspace folder
	gitInit(t, repo, home)
	repo = canonical(t, repo)
	is.NoErr(os.WriteFile(filepath.Join(repo, "README.md"), []byte("# notes\n"), 0o644))
	c := newClient(t, nil)
	h := startHub(ctx, t, dir, home)
	_, token := loginFirstUser(ctx, t, c, h)
	var reg struct{ ID string }
	status, _ := postJSON(ctx, t, c, h.url+"api/hub/workspaces", token, map[string]any{"path": repo, "start": true}, &reg)
	is.Equal(status, http.StatusOK) // registered and started

	subs := url.QueryEscape(`[{"topic":"document"}]`)
	req, err := http.NewRequestWithContext(ctx, "GET", h.url+"api/hub/live?activity=1&ws="+reg.ID+"&subs="+subs, nil)
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // the stream opens

	events := make(chan string, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	type envelope struct {
		Topic string
		Event struct {
			Kind string
			Data json.RawMessage
		}
	}
	// until reads envelopes until one satisfies ok, within a bound.
	until := func(what string, ok func(envelope) bool) envelope {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case data, open := <-events:
				if !open {
					t.Fatalf("the stream ended waiting for %s", what)
				}
				var e envelope
				json.Unmarshal([]byte(data), &e)
				if ok(e) {
					return e
				}
			case <-deadline:
				t.Fatalf("no %s within 20 s", what)
			}
		}
	}
	doc := func(kind string) func(envelope) bool {
		return func(e envelope) bool {
			return e.Topic == "document" && e.Event.Kind == "data" && strings.Contains(string(e.Event.Data), `"kind":"`+kind+`"`)
		}
	}
	signal := func(topic, kind string) func(envelope) bool {
		return func(e envelope) bool { return e.Topic == topic && e.Event.Kind == kind }
	}

	a := until("an activity summary", signal("activity", "data"))
	is.True(strings.Contains(string(a.Event.Data), `"running":true`)) // the workspace runs
	until("a document snapshot", doc("snapshot"))
	until("ready", signal("document", "ready"))
	is.NoErr(os.WriteFile(filepath.Join(repo, "saved.md"), []byte("saved\n"), 0o644))
	until("a patch naming the saved file", func(e envelope) bool {
		return doc("patch")(e) && strings.Contains(string(e.Event.Data), "saved.md")
	})

	status, _ = postJSON(ctx, t, c, h.url+"api/hub/sessions/"+reg.ID+"/stop", token, nil, nil)
	is.Equal(status, http.StatusOK) // stop the session
	until("unavailable", signal("document", "unavailable"))
	status, _ = postJSON(ctx, t, c, h.url+"api/hub/sessions/"+reg.ID+"/start", token, nil, nil)
	is.Equal(status, http.StatusOK)            // start it again
	until("a fresh snapshot", doc("snapshot")) // of the new child, which may still be indexing
	until("ready again", signal("document", "ready"))
	until("the saved file, indexed again", func(e envelope) bool {
		return e.Topic == "document" && e.Event.Kind == "data" && strings.Contains(string(e.Event.Data), "saved.md")
	})
}
