package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// worktreeReply is the part of a worktree answer the tests read.
type worktreeReply struct {
	OK       bool
	Kind     string
	Phase    string
	Checkout struct {
		CheckoutID, WorkspaceID, Path, Ownership string
		Registered, Running                      bool
	}
	Started      bool
	RequiresStop bool
	LocalData    struct {
		Fingerprint string
		Untracked   struct{ Count int }
	}
	Error struct{ Code, Message, Retry string }
	Refs  struct{ Local, Remote []string }
}

// worktreeServer is a server with a registered repository "app" at
// /home/ann/src/app, and ann's credentials.
func worktreeServer(t *testing.T) (*testServer, []string) {
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/src/app")
	r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/src/app"}`, auth...)
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	s.git.SetRefs("/home/ann/src/app", []string{"main"}, []string{"origin/main"})
	return s, auth
}

func (s *testServer) worktree(t *testing.T, op, body string, auth []string) worktreeReply {
	t.Helper()
	r := s.do(t, "POST", "/api/hub/worktrees/"+op, body, auth...)
	if r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", op, r.status, r.body)
	}
	var out worktreeReply
	r.json(t, &out)
	return out
}

func TestTheWorktreeFamilyOverHTTP(t *testing.T) {
	is := is.New(t)
	s, auth := worktreeServer(t)

	r := s.do(t, "GET", "/api/hub/worktrees?source=app", "", auth...)
	is.Equal(r.status, http.StatusOK)                                                                   // the inventory
	is.True(strings.Contains(string(r.body), `"ownership":"main"`))                                     // with the main checkout
	is.True(strings.Contains(string(r.body), `"fetchedAt":null`))                                       // never fetched
	is.Equal(s.do(t, "GET", "/api/hub/worktrees", "", auth...).status, http.StatusBadRequest)           // a source is required
	is.Equal(s.do(t, "GET", "/api/hub/worktrees?source=nope", "", auth...).status, http.StatusNotFound) // an unknown workspace: 404
	is.Equal(s.do(t, "GET", "/api/hub/worktrees?source=app", "").status, http.StatusUnauthorized)       // a session is required

	c := s.worktree(t, "create", `{"sourceWorkspaceId":"app","mode":"new-branch","branch":"task/one","base":{"kind":"local","ref":"main"}}`, auth)
	is.True(c.OK)                           // created
	is.Equal(c.Kind, "create")              // by a create
	is.Equal(c.Checkout.Ownership, "wharf") // the Hub's
	is.Equal(c.Checkout.Path, "/home/ann/src/app.worktrees/task-one")
	tree := c.Checkout.WorkspaceID

	bad := s.worktree(t, "create", `{"sourceWorkspaceId":"app","mode":"new-branch","branch":"a..b","baseRef":"main"}`, auth)
	is.True(!bad.OK)                          // a refusal is a completed request
	is.Equal(bad.Error.Code, "invalid-input") // of its kind
	is.Equal(bad.Error.Message, "That is not a valid branch name.")
	is.Equal(s.do(t, "POST", "/api/hub/worktrees/create", `{"mode":"new-branch"}`, auth...).status, http.StatusBadRequest)                  // no source: 400
	is.Equal(s.do(t, "POST", "/api/hub/worktrees/create", `{"sourceWorkspaceId":"app","mode":"x"}`, auth...).status, http.StatusBadRequest) // a mode outside the enum: 400

	o := s.worktree(t, "open", `{"sourceWorkspaceId":"app","reference":"task/one","start":true}`, auth)
	is.True(o.OK && o.Started) // opened and started
	is.Equal(o.Kind, "start")

	s.git.SetTreeFacts("/home/ann/src/app.worktrees/task-one", hub.TreeFacts{Entries: []hub.StatusEntry{{Code: "??", Path: "notes.txt"}}})
	p := s.worktree(t, "preflight-delete", `{"sourceWorkspaceId":"app","reference":"`+tree+`"}`, auth)
	is.True(p.OK && p.RequiresStop)          // deletable once stopped
	is.Equal(p.LocalData.Untracked.Count, 1) // losing one untracked file
	d := s.worktree(t, "delete", `{"sourceWorkspaceId":"app","reference":"`+tree+`","confirm":true,"stop":true}`, auth)
	is.Equal(d.Error.Code, "local-data") // not acknowledged
	d = s.worktree(t, "delete", `{"sourceWorkspaceId":"app","reference":"`+tree+`","confirm":true,"stop":true,"localDataFingerprint":"`+p.LocalData.Fingerprint+`"}`, auth)
	is.True(d.OK)                   // deleted
	is.Equal(d.Phase, "complete")   // completely
	is.True(!d.Checkout.Registered) // and unregistered

	c = s.worktree(t, "create", `{"sourceWorkspaceId":"app","mode":"new-branch","branch":"two","baseRef":"main"}`, auth)
	f := s.worktree(t, "forget", `{"sourceWorkspaceId":"app","reference":"two"}`, auth)
	is.True(f.OK) // forgotten
	is.Equal(f.Kind, "forget")
	g := s.worktree(t, "register", `{"sourceWorkspaceId":"app","reference":"`+c.Checkout.CheckoutID+`"}`, auth)
	is.True(g.OK)                           // registered again
	is.Equal(g.Checkout.Ownership, "wharf") // still the Hub's

	s.git.PushRemote("/home/ann/src/app", "origin/new")
	fe := s.worktree(t, "fetch", `{"sourceWorkspaceId":"app"}`, auth)
	is.True(fe.OK)                                                  // fetched
	is.Equal(fe.Refs.Remote, []string{"origin/main", "origin/new"}) // the remote's new branch
	r = s.do(t, "GET", "/api/hub/worktrees?source=app", "", auth...)
	is.True(!strings.Contains(string(r.body), `"fetchedAt":null`)) // and when

	st := s.do(t, "GET", "/api/hub/state", "", auth...)
	is.True(strings.Contains(string(st.body), `"createWorktree":true`)) // the main checkout can hold worktrees
	is.True(strings.Contains(string(st.body), `"parentId":"app"`))      // a tree names its parent
	is.True(strings.Contains(string(st.body), `"ownership":"wharf"`))   // and whose it is
}
