package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// repo makes a directory holding a Git repository on the fake disk.
func (s *testServer) repo(t *testing.T, p string) string {
	t.Helper()
	s.fs.MkdirAll(p)
	if err := s.git.Init(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

type stateReply struct {
	Workspaces []struct {
		ID, DisplayName, Path, Backend, RepositoryID, Branch, Availability string
		Running                                                            bool
		Shells                                                             *[]struct{ Attached bool }
		CredentialAssignments                                              struct{ Authentication, Signing []string }
	}
	WorkspaceDefaults *struct {
		Configured          *string
		ConfiguredAvailable bool
		Effective           string
	}
}

func TestWorkspaceLifecycleOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/wharf")

	r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/wharf","start":false}`, auth...)
	is.Equal(r.status, http.StatusOK)                               // registered
	is.Equal(string(r.body), `{"id":"wharf","running":false}`+"\n") // stopped on request

	r = s.do(t, "POST", "/api/hub/sessions/wharf/start", "", auth...)
	is.Equal(r.status, http.StatusOK)                              // started
	is.Equal(string(r.body), `{"id":"wharf","running":true}`+"\n") // running

	var st stateReply
	s.do(t, "GET", "/api/hub/state", "", auth...).json(t, &st)
	is.Equal(len(st.Workspaces), 1) // listed
	w := st.Workspaces[0]
	is.Equal(w.ID, "wharf")                               // id
	is.True(w.Running)                                    // running
	is.Equal(w.Branch, "main")                            // branch
	is.True(w.Shells != nil)                              // shells of the running child
	is.Equal(len(w.CredentialAssignments.Signing), 0)     // no assignments
	is.Equal(st.WorkspaceDefaults.Effective, "/home/ann") // defaults

	r = s.do(t, "POST", "/api/hub/workspaces/wharf/display-name", `{"displayName":"  Wharf  "}`, auth...)
	is.Equal(r.status, http.StatusOK) // renamed
	var sum struct{ Workspace struct{ DisplayName string } }
	r.json(t, &sum)
	is.Equal(sum.Workspace.DisplayName, "Wharf") // trimmed

	r = s.do(t, "POST", "/api/hub/workspaces/wharf/forget", "", auth...)
	is.Equal(r.status, http.StatusConflict) // running
	r = s.do(t, "POST", "/api/hub/sessions/wharf/stop", "{}", auth...)
	is.Equal(string(r.body), `{"id":"wharf","running":false,"wasRunning":true}`+"\n") // stopped
	r = s.do(t, "POST", "/api/hub/workspaces/wharf/forget", "", auth...)
	is.Equal(string(r.body), `{"id":"wharf","running":false,"forgotten":true}`+"\n") // forgotten
	r = s.do(t, "POST", "/api/hub/sessions/wharf/start", "", auth...)
	is.Equal(r.status, http.StatusNotFound)              // gone
	is.Equal(r.errorText(t), "unknown workspace: wharf") // message
}

func TestOnboardingOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.fs.MkdirAll("/home/ann/plain")
	s.fs.MkdirAll("/home/ann/src")

	r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/plain"}`, auth...)
	is.Equal(r.status, http.StatusConflict) // not a repository
	is.Equal(string(r.body), `{"error":"/home/ann/plain is not a git repository","needsInit":true}`+"\n")

	r = s.do(t, "POST", "/api/hub/workspaces/configure", `{"path":"/home/ann/plain","displayName":"Plain","init":true}`, auth...)
	is.Equal(r.status, http.StatusOK) // configured
	is.Equal(string(r.body), `{"workspace":{"id":"plain","displayName":"Plain","path":"/home/ann/plain","backend":"local","running":false},"started":false,"startError":null}`+"\n")

	s.backend.FailNextStart(hub.Errorf(hub.Internal, "session exited before it was ready (exit status 1)"))
	r = s.do(t, "POST", "/api/hub/workspaces/create", `{"parent":"/home/ann/src","folderName":"app","displayName":"App","start":true}`, auth...)
	is.Equal(r.status, http.StatusOK) // created; the start failed
	var res struct {
		Started    bool
		StartError *string
	}
	r.json(t, &res)
	is.True(!res.Started)                                                                                              // not started
	is.Equal(*res.StartError, "session for 'app' failed to start: session exited before it was ready (exit status 1)") // why

	before := s.snapshot(t)
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"unknown field", "/api/hub/workspaces", `{"path":"/home/ann/src/app","force":true}`, 400, "request contains an unknown field: \"force\""},
		{"field name in another case", "/api/hub/folders/create", `{"PARENT":"/home/ann","Name":"x"}`, 400, "request contains an unknown field: \"PARENT\""},
		{"field given twice", "/api/hub/folders/create", `{"parent":"/home/ann/src","parent":"/home/ann","name":"x"}`, 400, "request contains a duplicate field: \"parent\""},
		{"nested field in another case", "/api/hub/workspaces/configure", `{"path":"/home/ann/src","displayName":"x","authentication":[{"CredentialId":"k","host":"h"}]}`, 400, "request contains an unknown field: \"CredentialId\""},
		{"nested field given twice", "/api/hub/workspaces/configure", `{"path":"/home/ann/src","displayName":"x","authentication":[{"credentialId":"k","host":"h","host":"i"}]}`, 400, "request contains a duplicate field: \"host\""},
		{"folder name over 255 bytes", "/api/hub/folders/create", `{"parent":"/home/ann","name":"` + strings.Repeat("n", 256) + `"}`, 400, "name is longer than 255 bytes"},
		{"display name with a bidi override", "/api/hub/workspaces/configure", `{"path":"/home/ann/src","displayName":"evil\u202etxt.exe"}`, 400, "workspace display name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"start not boolean", "/api/hub/workspaces", `{"path":"/home/ann/src/app","start":"yes"}`, 400, "start must be a boolean"},
		{"relative path", "/api/hub/workspaces", `{"path":"src/app"}`, 400, "an absolute folder path is required"},
		{"missing display name", "/api/hub/workspaces/configure", `{"path":"/home/ann/src"}`, 400, "displayName is required"},
		{"65-character display name", "/api/hub/workspaces/configure", `{"path":"/home/ann/src","displayName":"` + strings.Repeat("x", 65) + `"}`, 400, "workspace display name must be at most 64 characters"},
		{"already registered", "/api/hub/workspaces/configure", `{"path":"/home/ann/plain","displayName":"x"}`, 409, "folder is already registered as workspace plain"},
		{"credential selection", "/api/hub/workspaces/configure", `{"path":"/home/ann/src","displayName":"x","init":true,"signing":"k1"}`, 409, "unknown credential: k1"},
		{"destination exists", "/api/hub/workspaces/create", `{"parent":"/home/ann","folderName":"src","displayName":"x"}`, 409, "destination already exists"},
		{"bidi folder name", "/api/hub/workspaces/create", `{"parent":"/home/ann","folderName":"a\u202eb","displayName":"x"}`, 400, "folderName must be one visible non-hidden path segment"},
		{"display name only spaces", "/api/hub/workspaces/1/display-name", `{"displayName":"   "}`, 400, "workspace display name must not be empty"},
		{"display name unknown id", "/api/hub/workspaces/nope/display-name", `{"displayName":"x"}`, 404, "unknown workspace: nope"},
		{"start unknown id", "/api/hub/sessions/nope/start", ``, 404, "unknown workspace: nope"},
		{"forget unknown id", "/api/hub/workspaces/nope/forget", ``, 404, "unknown workspace: nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", tc.path, tc.body, auth...)
			is.Equal(r.status, tc.status)    // status
			is.Equal(r.errorText(t), tc.msg) // message
			is.Equal(s.snapshot(t), before)  // nothing changed
		})
	}
}

func TestFoldersOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/g/a")
	s.repo(t, "/home/ann/g/b")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/g/b"}`, auth...)
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/g/a"}`, auth...)

	r := s.do(t, "GET", "/api/hub/browse?path=/home/ann/g", "", auth...)
	is.Equal(string(r.body), `{"path":"/home/ann/g","parent":"/home/ann","dirs":[`+
		`{"name":"a","git":true,"registeredId":"a","displayName":"a","running":true},`+
		`{"name":"b","git":true,"registeredId":"b","displayName":"b","running":true}]}`+"\n") // browse

	r = s.do(t, "POST", "/api/hub/folders/rename", `{"path":"/home/ann/g","name":"h"}`, auth...)
	is.Equal(r.status, http.StatusConflict) // running sessions
	is.Equal(string(r.body), `{"error":"affected workspace sessions must be stopped","needsStop":true,"workspaceIds":["a","b"]}`+"\n")

	r = s.do(t, "POST", "/api/hub/folders/rename", `{"path":"/home/ann/g","name":"h","stop":true}`, auth...)
	is.Equal(string(r.body), `{"path":"/home/ann/h","workspaceIds":["b","a"]}`+"\n") // renamed, paths followed

	r = s.do(t, "POST", "/api/hub/folders/create", `{"parent":"/home/ann","name":"empty"}`, auth...)
	is.Equal(string(r.body), `{"path":"/home/ann/empty"}`+"\n") // created
	r = s.do(t, "POST", "/api/hub/folders/remove", `{"path":"/home/ann/empty"}`, auth...)
	is.Equal(string(r.body), `{"path":"/home/ann/empty"}`+"\n") // removed

	before := s.snapshot(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"browse relative", "GET", "/api/hub/browse?path=home", "", 400, "path must be absolute"},
		{"browse empty", "GET", "/api/hub/browse?path=", "", 400, "path must be absolute"},
		{"browse missing", "GET", "/api/hub/browse?path=/nope", "", 404, "cannot read directory: /nope"},
		{"create hidden", "POST", "/api/hub/folders/create", `{"parent":"/home/ann","name":".x"}`, 400, "name must be one visible non-hidden path segment"},
		{"create zero-width", "POST", "/api/hub/folders/create", `{"parent":"/home/ann","name":"a\u200bb"}`, 400, "name must be one visible non-hidden path segment"},
		{"create C1", "POST", "/api/hub/folders/create", `{"parent":"/home/ann","name":"a\u0085b"}`, 400, "name must be one visible non-hidden path segment"},
		{"create onto existing", "POST", "/api/hub/folders/create", `{"parent":"/home/ann","name":"h"}`, 409, "destination already exists"},
		{"rename stop not boolean", "POST", "/api/hub/folders/rename", `{"path":"/home/ann/h","name":"i","stop":"yes"}`, 400, "stop must be a boolean"},
		{"rename dot dot", "POST", "/api/hub/folders/rename", `{"path":"/home/ann/h","name":".."}`, 400, "name must be one visible non-hidden path segment"},
		{"rename relative", "POST", "/api/hub/folders/rename", `{"path":"h","name":"i"}`, 400, "path must be an absolute path"},
		{"remove not empty", "POST", "/api/hub/folders/remove", `{"path":"/home/ann/h"}`, 409, "folder is not empty"},
		{"remove missing", "POST", "/api/hub/folders/remove", `{"path":"/home/ann/nope"}`, 404, "folder was not found"},
		{"malformed JSON", "POST", "/api/hub/folders/remove", `{"path":`, 400, "invalid JSON body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, tc.method, tc.path, tc.body, auth...)
			is.Equal(r.status, tc.status)    // status
			is.Equal(r.errorText(t), tc.msg) // message
			is.Equal(s.snapshot(t), before)  // nothing changed
		})
	}
}

func TestWorkspaceDefaultsOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.fs.MkdirAll("/srv/code")
	r := s.do(t, "GET", "/api/hub/settings/workspace-defaults", "", auth...)
	is.Equal(string(r.body), `{"configured":null,"configuredAvailable":false,"effective":"/home/ann"}`+"\n") // none
	r = s.do(t, "POST", "/api/hub/settings/workspace-defaults", `{"defaultWorkspaceParent":"/srv/./code"}`, auth...)
	is.Equal(string(r.body), `{"configured":"/srv/code","configuredAvailable":true,"effective":"/srv/code"}`+"\n") // canonical
	r = s.do(t, "POST", "/api/hub/settings/workspace-defaults", `{"defaultWorkspaceParent":"srv"}`, auth...)
	is.Equal(r.status, http.StatusBadRequest)                                     // relative
	is.Equal(r.errorText(t), "default workspace parent must be an absolute path") // message
	r = s.do(t, "POST", "/api/hub/settings/workspace-defaults", `{}`, auth...)
	is.Equal(r.errorText(t), "defaultWorkspaceParent is required") // absent is not null
	r = s.do(t, "POST", "/api/hub/settings/workspace-defaults", `{"defaultWorkspaceParent":null}`, auth...)
	is.Equal(string(r.body), `{"configured":null,"configuredAvailable":false,"effective":"/home/ann"}`+"\n") // cleared
}

func TestPersonalStateOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	ann := bearer(s.login(t, "ann", annPassword))
	bob := bearer(s.login(t, "bob", bobPassword))
	s.repo(t, "/home/ann/a")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/a","start":false}`, ann...)

	r := s.do(t, "GET", "/s/a/api/personal-state", "", ann...)
	is.Equal(string(r.body), `{"version":1}`+"\n") // empty, answered while stopped
	r = s.do(t, "PATCH", "/s/a/api/personal-state", `{"version":1,"documentPath":"docs/a.md","follow":true}`, ann...)
	is.Equal(string(r.body), `{"version":1,"documentPath":"docs/a.md","follow":true}`+"\n") // set
	r = s.do(t, "PATCH", "/s/a/api/personal-state", `{"follow":null,"previewMode":"diff"}`, ann...)
	is.Equal(string(r.body), `{"version":1,"documentPath":"docs/a.md","previewMode":"diff"}`+"\n") // null clears, absent kept
	r = s.do(t, "GET", "/s/a/api/personal-state", "", bob...)
	is.Equal(string(r.body), `{"version":1}`+"\n") // per user

	r = s.do(t, "POST", "/s/a/api/activity-viewed", "", ann...)
	is.Equal(r.status, http.StatusNoContent)            // acknowledged
	is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store

	before := s.snapshot(t)
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"client identity", `{"user":"bob"}`, 400, "unknown personal state field: user"},
		{"version", `{"version":2}`, 400, "unsupported personal state version"},
		{"absolute path", `{"documentPath":"/etc/passwd"}`, 400, "documentPath must be a normalized relative path"},
		{"follow string", `{"follow":"yes"}`, 400, "follow must be a boolean or null"},
		{"bad uuid", `{"lastPtyId":"x"}`, 400, "lastPtyId must be a UUID or null"},
		{"not an object", `[1]`, 400, "request must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "PATCH", "/s/a/api/personal-state", tc.body, ann...)
			is.Equal(r.status, tc.status)    // status
			is.Equal(r.errorText(t), tc.msg) // message
			is.Equal(s.snapshot(t), before)  // nothing changed
		})
	}
	r = s.do(t, "GET", "/s/nope/api/personal-state", "", ann...)
	is.Equal(r.status, http.StatusNotFound) // unknown workspace
	r = s.do(t, "POST", "/s/nope/api/activity-viewed", "", ann...)
	is.Equal(r.status, http.StatusNotFound) // unknown workspace
	r = s.do(t, "PUT", "/s/a/api/personal-state", "{}", ann...)
	is.Equal(r.status, http.StatusMethodNotAllowed) // other methods
	is.Equal(r.header.Get("Allow"), "GET, PATCH")   // name the allowed ones
	r = s.do(t, "GET", "/s/a/api/personal-state", "")
	is.Equal(r.status, http.StatusUnauthorized) // a session is required
}

func TestProxyToTheSession(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/a")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/a","start":false}`, auth...)

	r := s.do(t, "GET", "/s/a/api/session", "", auth...)
	is.Equal(r.status, http.StatusServiceUnavailable)      // stopped: 503
	is.Equal(r.errorText(t), "workspace a is not running") // JSON
	r = s.do(t, "GET", "/s/nope/api/session", "", auth...)
	is.Equal(r.status, http.StatusNotFound) // unknown
	r = s.do(t, "GET", "/s/a/api/session", "")
	is.Equal(r.status, http.StatusUnauthorized) // the session is checked first

	s.do(t, "POST", "/api/hub/sessions/a/start", "", auth...)
	r = s.do(t, "GET", "/s/a/api/session", "", auth...)
	is.Equal(r.status, http.StatusOK)                                              // forwarded to the child
	is.Equal(string(r.body), `{"workspaceId":"a","workspaceApiRevision":24}`+"\n") // its answer
}

// The state answer reuses the encoded listing while the Hub's listing is
// unchanged; a change must show in the next answer.
func TestStateAnswerFollowsTheListing(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/wharf")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/wharf","start":false}`, auth...)

	first := s.do(t, "GET", "/api/hub/state", "", auth...)
	again := s.do(t, "GET", "/api/hub/state", "", auth...)
	is.Equal(string(again.body), string(first.body))      // unchanged, the same bytes
	is.True(strings.HasSuffix(string(first.body), "}\n")) // one JSON value and a newline, as every answer

	s.do(t, "POST", "/api/hub/workspaces/wharf/display-name", `{"displayName":"Quay"}`, auth...)
	var st stateReply
	s.do(t, "GET", "/api/hub/state", "", auth...).json(t, &st)
	is.Equal(st.Workspaces[0].DisplayName, "Quay") // the new name, not the cached answer
}
