package child

import (
	"io"
	"net/http"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub/chat"
)

// serveAgentLogin answers POST childproto.AgentLoginPath: the Hub says
// that an agent's login on its machine changed, and the conversation core
// re-reads the agent (chat.Manager.AgentLoginChanged): 204 once taken,
// 400 for a body childproto refuses (at most MaxAgentLoginBytes are
// read), 503 while the child stops. Only the Hub reaches it: the path is
// internal (never forwarded) and the socket private. A child without a
// core knows no agent, so every change is no change.
func serveAgentLogin(m *chat.Manager) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, childproto.MaxAgentLoginBytes))
		if err != nil {
			childproto.WriteError(w, http.StatusBadRequest, "the body is not an agent login")
			return
		}
		l, err := childproto.DecodeAgentLogin(body)
		if err != nil {
			childproto.WriteError(w, http.StatusBadRequest, "the body is not an agent login")
			return
		}
		if m != nil {
			if err := m.AgentLoginChanged(l.Agent); err != nil {
				childproto.WriteError(w, http.StatusServiceUnavailable, "the session is stopping")
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	}
}
