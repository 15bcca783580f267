package child_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
)

// catalogs decodes an inventory tick's catalog revisions.
func catalogs(t *testing.T, ev sseEvent) map[string]string {
	t.Helper()
	tick, err := childproto.DecodeInventoryTick([]byte(ev.data))
	if err != nil {
		t.Fatalf("%q is no inventory tick: %v", ev.data, err)
	}
	return tick.Catalogs
}

// untilTick reads the inventory feed's ticks until ok holds after one,
// and returns that tick's catalogs; at most 64 ticks, each within
// feedWait.
func untilTick(t *testing.T, feed *sseStream, what string, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	for range 64 {
		if c := catalogs(t, feed.next(t)); ok(c) {
			return c
		}
	}
	t.Fatalf("no tick after which %s", what)
	return nil
}

// After an agent's login changed on the Hub, the conversation that was
// refused for want of a login works on its next prompt, and the inventory
// feed tells clients to read the agent again.
func TestTheHubsAgentLoginReachesTheConversations(t *testing.T) {
	is := is.New(t)
	srv, m := chatServer(t)
	base := srv.URL + "/s/ws/api/chat/"
	_, body := req(t, "POST", base+"conversations", `{"agent":"scripted"}`)
	var created struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(body, &created))
	msgs := base + "conversations/" + url.PathEscape(created.Conversation.ID) + "/messages"
	resp, err := http.Get(srv.URL + feedURI(t, hub.TopicInventory, "", ""))
	is.NoErr(err)
	defer resp.Body.Close()
	feed := readStream(resp.Body)
	status, _ := req(t, "POST", msgs, `{"text":"`+agentscript.Auth+`"}`)
	is.Equal(status, 202)
	before := untilTick(t, feed, "the agent needs a login", func(c map[string]string) bool {
		a := m.Agents()[0]
		return a.Availability == "login-required" && c["scripted"] == a.CatalogRevision
	})

	status, body = req(t, "POST", srv.URL+childproto.AgentLoginPath, `{"agent":"scripted"}`)
	is.Equal(status, http.StatusNoContent) // taken
	is.Equal(len(body), 0)                 // without a body
	after := catalogs(t, feed.next(t))
	is.True(after["scripted"] != before["scripted"]) // the feed ticks with the agent's catalog moved
	_, body = req(t, "GET", base+"agents", "")
	is.True(strings.Contains(string(body), `"availability":"available"`)) // and the agent is available again

	status, _ = req(t, "POST", msgs, `{"text":"`+agentscript.Stream+`"}`)
	is.Equal(status, 202)
	untilTick(t, feed, "the next prompt completed", func(map[string]string) bool {
		return m.List()[0].Status == "completed"
	})
}

func TestAnAgentLoginIsAnsweredAsTheProtocolSays(t *testing.T) {
	srv, m := chatServer(t)
	u := srv.URL + childproto.AgentLoginPath
	for _, tc := range []struct {
		name, method, body string
		status             int
	}{
		{"a known agent", "POST", `{"agent":"scripted"}`, 204},
		{"an unknown agent", "POST", `{"agent":"nobody"}`, 204},
		{"no body", "POST", ``, 400},
		{"not an agent id", "POST", `{"agent":"a:b"}`, 400},
		{"an unknown field", "POST", `{"agent":"scripted","token":"x"}`, 400},
		{"a body too long", "POST", `{"agent":"scripted"}` + strings.Repeat(" ", childproto.MaxAgentLoginBytes), 400},
		{"GET", "GET", ``, 404},
		{"PUT", "PUT", `{"agent":"scripted"}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r, err := http.NewRequestWithContext(t.Context(), tc.method, u, strings.NewReader(tc.body))
			is.NoErr(err)
			resp, err := http.DefaultClient.Do(r)
			is.NoErr(err)
			defer resp.Body.Close()
			is.Equal(resp.StatusCode, tc.status)                   // its status
			is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached
			if tc.status != 204 {
				var e childproto.ErrorBody
				is.NoErr(json.NewDecoder(resp.Body).Decode(&e)) // a JSON error
				is.True(e.Error != "")                          // with a message
			}
		})
	}
	t.Run("a stopping session", func(t *testing.T) {
		is := is.New(t)
		m.Close()
		status, _ := req(t, "POST", u, `{"agent":"scripted"}`)
		is.Equal(status, http.StatusServiceUnavailable) // cannot take it
	})
	t.Run("a child without agents", func(t *testing.T) {
		is := is.New(t)
		rec := httptest.NewRecorder()
		child.NewHandler("ws", child.HandlerOptions{}).ServeHTTP(rec,
			httptest.NewRequest("POST", childproto.AgentLoginPath, strings.NewReader(`{"agent":"scripted"}`)))
		is.Equal(rec.Code, http.StatusNoContent) // knows no agent: no change
	})
}
