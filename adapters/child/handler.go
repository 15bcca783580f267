package child

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/child/shells"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// Revision is the workspace API revision this child speaks. It versions the
// whole internal protocol (adapters/internal/childproto), and the child
// reports it in its facts and its Info.
const Revision = 24

// Info is the body of GET /s/{id}/api/session.
type Info struct {
	WorkspaceID          string `json:"workspaceId"`
	WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
}

// HandlerOptions configure NewHandler. The zero value serves every
// endpoint but the document feed, with the default keepalive.
type HandlerOptions struct {
	// Documents serves the document feed: the workspace folder's
	// docfeed.Feed.Handler (Main starts the feed on first use), which
	// reads the request's key itself. nil leaves the feed's path
	// unserved (404), as any unknown path.
	Documents http.Handler
	// KeepAlive is the interval of the ": keepalive" comments of the
	// activity, inventory, conversation and notification feeds; the
	// document feed has its own (docfeed.Options.KeepAlive). Default
	// childproto.DefaultKeepAlive.
	KeepAlive time.Duration
	// Chat is the workspace's conversation core: it serves the chat API
	// under /s/{ID}/api/chat/ and feeds the activity, inventory,
	// conversation and notification feeds. nil: no agent (the feeds say
	// so, the API is 404).
	Chat *chat.Manager
	// Shells is the session's shells: it serves the shells API under
	// /s/{ID}/api/shells, lists them in the facts and moves the activity
	// frames' shells revision. nil: no shells (the facts list none, the
	// API is 404).
	Shells *shells.Registry
	// Hold serves childproto.HoldPath, by which an adopting Hub holds a
	// child started with a detach grace. nil: 404, as any unknown path.
	Hold http.Handler
	// Logger receives the chat and shells APIs' failures. Default
	// discards.
	Logger *slog.Logger
}

// NewHandler returns the child's HTTP handler for the workspace id. Routes
// match the exact, already decoded path and the GET method only (POST for
// childproto.AgentLoginPath, agentlogin.go; the chat and shells APIs route
// their own methods); anything else is a JSON 404, so the Hub's verbatim forwarding never meets a
// redirect or a plain-text error. Every JSON answer carries Cache-Control:
// no-store; feeds answer text/event-stream (see childproto), one route
// per topic of the Hub's topic table that has a feed, each with its query
// read and checked against the table (400 otherwise) before the feed
// runs. Feeds stream until the client goes away or the request's context
// ends: a server that must stop ends them through its BaseContext, since a
// stream never goes idle for Shutdown to close it.
func NewHandler(workspaceID string, opts HandlerOptions) http.Handler {
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = childproto.DefaultKeepAlive
	}
	base := "/s/" + workspaceID + "/"
	routes := map[string]http.HandlerFunc{
		childproto.FactsPath: func(w http.ResponseWriter, _ *http.Request) {
			childproto.WriteJSON(w, http.StatusOK, childproto.Facts{WorkspaceAPIRevision: Revision, Shells: factsShells(opts.Shells)})
		},
		base + "api/session": func(w http.ResponseWriter, _ *http.Request) {
			childproto.WriteJSON(w, http.StatusOK, Info{WorkspaceID: workspaceID, WorkspaceAPIRevision: Revision})
		},
		childproto.NotificationsPath: serveNotifications(opts.Chat, opts.KeepAlive),
	}
	if opts.Hold != nil {
		routes[childproto.HoldPath] = opts.Hold.ServeHTTP
	}
	for t, f := range feedsOf(opts) {
		path := childproto.FeedPath(t)
		if path == "" {
			// A defect of this package, which every test of it meets.
			panic("child: a feed of the " + string(t) + " topic, which the topic table gives no feed")
		}
		routes[path] = serveFeed(t, f)
	}
	h := &handler{routes: routes, posts: map[string]http.HandlerFunc{
		childproto.AgentLoginPath: serveAgentLogin(opts.Chat),
	}}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Chat != nil {
		h.chatPrefix = base + "api/chat/"
		h.chat = &chatAPI{m: opts.Chat, prefix: h.chatPrefix, log: log}
	}
	if opts.Shells != nil {
		h.shellsPrefix = base + "api/shells"
		h.shells = &shellsAPI{reg: opts.Shells, prefix: h.shellsPrefix, log: log}
	}
	return h
}

// factsShells is the facts' list of the shells: every one, agents'
// terminals included, [] when there is none.
func factsShells(reg *shells.Registry) []childproto.Shell {
	out := []childproto.Shell{}
	if reg == nil {
		return out
	}
	for _, s := range reg.List() {
		out = append(out, childproto.Shell{Attached: s.Attached, Label: s.Label})
	}
	return out
}

// feed serves one topic's feed of req, the request's query as the router
// read it.
type feed func(w http.ResponseWriter, r *http.Request, req childproto.FeedRequest)

// feedsOf is the child's implementation of each topic's feed, by topic:
// every topic the Hub's topic table gives a feed has one here (a test
// holds it to the table), the document feed only when opts.Documents is
// set. What a feed sends is particular to its topic; its path, query and
// framing are childproto's, from the table.
func feedsOf(opts HandlerOptions) map[hub.Topic]feed {
	feeds := map[hub.Topic]feed{
		hub.TopicActivity:     serveActivity(opts.Chat, opts.Shells, opts.KeepAlive),
		hub.TopicInventory:    serveInventory(opts.Chat, opts.KeepAlive),
		hub.TopicConversation: serveConversation(opts.Chat, opts.KeepAlive),
	}
	if opts.Documents != nil {
		feeds[hub.TopicDocument] = func(w http.ResponseWriter, r *http.Request, _ childproto.FeedRequest) {
			opts.Documents.ServeHTTP(w, r)
		}
	}
	return feeds
}

// serveFeed reads the request of topic t's feed from the query, answering
// 400 with childproto's message when the table's topic does not take it,
// and serves it with f.
func serveFeed(t hub.Topic, f feed) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := childproto.ParseFeedQuery(t, r.URL.Query())
		if err != nil {
			childproto.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		f(w, r, req)
	}
}

// handler routes by exact path (GET routes, and the internal POSTs), and
// the chat and shells APIs by prefix.
type handler struct {
	routes       map[string]http.HandlerFunc
	posts        map[string]http.HandlerFunc
	chatPrefix   string
	chat         http.Handler
	shellsPrefix string // /s/{ID}/api/shells, served with what follows a "/"
	shells       http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := h.routes[r.URL.Path]; ok && r.Method == http.MethodGet {
		f(w, r)
		return
	}
	if f, ok := h.posts[r.URL.Path]; ok && r.Method == http.MethodPost {
		f(w, r)
		return
	}
	if h.chat != nil && strings.HasPrefix(r.URL.Path, h.chatPrefix) {
		h.chat.ServeHTTP(w, r)
		return
	}
	if h.shells != nil && (r.URL.Path == h.shellsPrefix || strings.HasPrefix(r.URL.Path, h.shellsPrefix+"/")) {
		h.shells.ServeHTTP(w, r)
		return
	}
	childproto.WriteError(w, http.StatusNotFound, "not found")
}
