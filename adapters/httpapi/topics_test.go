package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// The live stream takes subscriptions as the topic table says: a
// subscribable topic opens (with a key where it needs one), a Hub-wide one
// is refused with the contract's message, a key is refused where the
// topic takes none and required where it needs one.
func TestLiveSubscriptionsFollowTheTopicTable(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	auth := bearer(s.login(t, "ann", annPassword))
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app"}`, auth...)
	subs := func(sub map[string]any) string {
		b, err := json.Marshal([]any{sub})
		if err != nil {
			t.Fatal(err)
		}
		return subsQuery("app", string(b))
	}
	for _, spec := range hub.Topics() {
		t.Run(string(spec.Name), func(t *testing.T) {
			is := is.New(t)
			sub := map[string]any{"topic": spec.Name}
			if spec.Key == hub.KeyRequired {
				sub["key"] = "k"
			}
			if !spec.Subscribable() {
				r := s.do(t, "GET", "/api/hub/live?"+subs(sub), "", auth...)
				is.Equal(r.status, http.StatusBadRequest)                             // a Hub-wide topic is not subscribed
				is.Equal(r.errorText(t), hub.MessageOf(hub.SubscriptionTopicError())) // with the contract's message
				return
			}
			l := s.openLive(t, subs(sub), auth...)
			is.Equal(l.envelopes(1)[0].Topic, string(spec.Name)) // the subscription is followed

			switch spec.Key {
			case hub.KeyNone:
				sub["key"] = "k"
			case hub.KeyRequired:
				delete(sub, "key")
			default:
				return // with or without a key
			}
			r := s.do(t, "GET", "/api/hub/live?"+subs(sub), "", auth...)
			is.Equal(r.status, http.StatusBadRequest) // a key where none is taken, or none where one is needed
		})
	}
}
